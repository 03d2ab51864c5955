"""Page benches on gunicorn: first requests and long pages, the review queue and its growth, concurrent
reviewers saving drafts, and the review world (reviewers, pool, logged-in sessions) they share."""

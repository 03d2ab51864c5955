"""Scoring and retrieval benches: relevance metrics (TREC files, the full metric set, reports, leaderboards),
BM25 and statute keyword retrieval, and how CUAD grading and metric cost grow with the work."""

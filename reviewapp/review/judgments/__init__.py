"""Items and their judgments: what a reviewer grades, each reviewer's judgment of it (append-only revisions saved,
reopened and undone), the hashes that bind a judgment to the texts, and the counted judgments of a pool.
"""

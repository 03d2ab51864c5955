"""Items and their judgments: what a reviewer grades, each reviewer's judgment of it (append-only revisions), the
hashes that bind a judgment to the texts, and the labels read from completed judgments.
"""

"""Items and their judgments: what a reviewer grades, each reviewer's judgment of it (append-only revisions), and
the hashes that bind a judgment to the texts. The reviewer's acts that write them are in ``workspace.services``.
"""

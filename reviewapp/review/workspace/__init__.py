"""The reviewer's side: their queue, skip and undo, where the passage sits in its source, whether a judgment is
stale.
"""

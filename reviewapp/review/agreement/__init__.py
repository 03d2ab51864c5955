"""A pool's judgments read together (/review/agreement/): its labels (adjudicated, else agreed, else unresolved),
progress, agreement between reviewers, disagreements and their rulings, span answers read together, exports
(qrels, judgments).
"""

"""A pool's judgments read together: progress, agreement between reviewers, disagreements and their rulings,
exports (qrels, judgments).
"""

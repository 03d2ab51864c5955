"""A pool's settings after it is declared: guidelines, known-answer items, unassign and reassign, label-deciding
settings.
"""

"""Span answers: parts of an item's source text that answer its query (the clause spans of a contract): the checks,
the normal form, and where a span falls in the original.
"""

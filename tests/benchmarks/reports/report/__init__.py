"""The report of a stored comparison: pages, figures, coverage, status words, suite fields."""

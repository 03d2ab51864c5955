"""Contracts in chromium: labelling spans, the gold flow, the CUAD console."""

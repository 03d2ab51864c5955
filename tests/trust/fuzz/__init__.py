"""Hostile input: fuzzed importers, runs and judgments, input out of bounds."""

"""Parsers of further official formats (benchmarks/corpus holds twelve modules, its limit).

Each is a pure function of the source bytes returning a ``ParsedSource``, like the NRS, HRS and USLM parsers
one level up.
"""

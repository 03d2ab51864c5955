"""The parsers of the official formats: Nevada's NRS HTML, Hawaii's HRS JSON, the US Code's USLM XML and the
eCFR's XML.

Each is a pure function of the source bytes returning a ``ParsedSource`` (``benchmarks/corpus/base.py``); a bad
source is refused naming where.
"""

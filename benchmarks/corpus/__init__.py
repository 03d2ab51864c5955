"""One parser per official statute format. Pure functions over bytes."""

from benchmarks.corpus.base import ParsedProvision, ParsedSource, ParseError

__all__ = ["ParseError", "ParsedProvision", "ParsedSource"]

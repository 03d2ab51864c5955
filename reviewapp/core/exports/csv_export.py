"""The one CSV writer of the product: every CSV export goes through it.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and,
in some, tab or carriage return) as a formula; a pasted run whose model was
``=HYPERLINK(...)`` came back live in the runs and explorer exports. Following
the OWASP rule, such a text cell is written with a leading single quote, which
the spreadsheet shows as text and never evaluates.

Numbers stay numbers: a value that is an ``int``/``float``/``Decimal``, or a
string that is a plain decimal number (``-0.25``, ``+3``, ``1e-05``), is
written unchanged. A spreadsheet reads those as numbers, not formulas, and
quoting them would turn every negative delta in a metrics export into text.
Anything else that starts with a trigger character (``-1+2``, ``-cmd``,
``@SUM(A1)``) is quoted.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise_cell(value: Any) -> Any:
    """The cell as it is safe to write: text starting with a formula trigger gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


class SafeCsvWriter:
    """``csv.writer`` whose rows are neutralised cell by cell."""

    def __init__(self, out: IO[str], **options: Any) -> None:
        self._writer = csv.writer(out, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([neutralise_cell(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class SafeCsvDictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose rows are neutralised cell by cell (the header too)."""

    def __init__(self, out: IO[str], fieldnames: Sequence[str], **options: Any) -> None:
        super().__init__(out, fieldnames=list(fieldnames), **options)

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow({key: neutralise_cell(value) for key, value in rowdict.items()})

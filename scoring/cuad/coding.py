"""Word tokens of many texts as exact integer ids, computed as array work over their characters.

``code_texts(texts)`` gives each text's tokens (the ``tokens.tokenize`` tokens: the text lowercased, then
maximal runs of ``\\w`` characters) as ids into one vocabulary shared by all the texts: two tokens have the
same id exactly when they are the same string. The grader's pair scores need nothing else of a token, and a
contract of 15,000 tokens otherwise becomes 15,000 Python strings and as many dictionary look-ups.

How, and why it is exact:

1. The texts are joined with a space (no token spans two texts) and lowercased, and the characters become
   an array (bytes for ASCII, UTF-32 code points otherwise) with a mask of the word characters; tokens are
   the runs of word characters.
2. Each token gets a 64-bit key: an ASCII token of at most 8 characters is its own bytes (exact); a longer
   one (or any token of a non-ASCII text) a polynomial hash of its characters mod 2**64 from one prefix sum.
3. The distinct keys give the ids, and every hashed token is compared character by character with one
   token of its id. Only if all are equal are the ids returned: then one id never holds two
   different strings, so the ids are exactly the distinct tokens. A collision (never seen, but possible for
   any 64-bit hash) returns None and the caller takes the string path, so no figure depends on a hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

# An odd multiplier, so that it has an inverse mod 2**64 (the golden-ratio constant; any odd value works).
_BASE = 0x9E3779B97F4A7C15
_BASE_INVERSE = pow(_BASE, -1, 2**64)
# (BASE**i, BASE**-i) for i below their length, kept between calls as one tuple (swapped whole, so a thread
# never sees one table grown and the other not), and only up to this many entries (16 bytes each).
_tables = (np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint64))
_TABLES_KEPT = 1 << 22


@dataclass(frozen=True)
class CodedTexts:
    """Token ids of texts: text ``k``'s tokens are ``ids[bounds[k]:bounds[k + 1]]``, in order; ids < ``vocabulary``."""

    ids: np.ndarray  # (tokens,) int64
    bounds: np.ndarray  # (texts + 1,) int64
    vocabulary: int
    lowered: str = field(repr=False)  # the texts lowercased, joined by a space
    offsets: np.ndarray = field(repr=False)  # (texts + 1,) where each text starts in ``lowered``

    def lengths(self) -> np.ndarray:
        return np.diff(self.bounds)

    def text(self, k: int) -> np.ndarray:
        return self.ids[self.bounds[k] : self.bounds[k + 1]]

    def lowered_text(self, k: int) -> str:
        """Text ``k`` lowercased (``text.lower()``)."""
        return self.lowered[self.offsets[k] : self.offsets[k + 1] - 1]


def _power_tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """BASE**i and BASE**-i mod 2**64 for i < n (kept and grown by doubling: contracts reuse them)."""
    global _tables
    powers, inverse = _tables
    if len(powers) < n:
        size = max(n, 2 * len(powers))
        powers, inverse = _cumulative_powers(_BASE, size), _cumulative_powers(_BASE_INVERSE, size)
        if size <= _TABLES_KEPT:
            _tables = (powers, inverse)
    return powers[:n], inverse[:n]


def _cumulative_powers(base: int, size: int) -> np.ndarray:
    factors = np.full(size, base, dtype=np.uint64)
    factors[0] = 1
    return np.cumprod(factors, dtype=np.uint64)  # uint64 products wrap mod 2**64: the arithmetic wanted


def _is_word_character(code_point: int) -> bool:
    ch = chr(code_point)
    return ch.isalnum() or ch == "_"


# ``\\w`` of a str pattern is ``ch.isalnum() or ch == "_"``; the table answers it for every byte value.
_WORD_BYTES = np.array([_is_word_character(c) for c in range(256)])
# A token of at most 8 ASCII characters is its own key: its bytes, little-endian, the rest zero.
_KEEP_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [2**64 - 1], dtype=np.uint64)
# Keys of longer tokens are hashes with the top bit set; a packed key's top bit is 0 (ASCII bytes are < 128).
_HASHED = np.uint64(1 << 63)


def _lowered(texts: Sequence[str]) -> tuple[str, np.ndarray]:
    """The texts lowercased and joined by a space, and each text's start offset in it (one past the end last).

    One ``lower()`` of the joined string when no character changes length in lowercasing (then offsets hold);
    otherwise each text alone. Both give each text's own ``text.lower()``: the space between texts is neither
    cased nor case-ignorable, so it ends the context of a final sigma the same way the end of a text does.
    """
    joined = " ".join(texts)
    lowered = joined.lower()
    if len(lowered) != len(joined):
        texts = [text.lower() for text in texts]
        lowered = " ".join(texts)
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1, out=starts[1:])
    return lowered, starts


def _characters(lowered: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """The characters as an array (bytes when ASCII, else code points), which are word characters, and ASCII."""
    if lowered.isascii():
        chars = np.frombuffer(lowered.encode("ascii"), dtype=np.uint8)
        return chars, _WORD_BYTES[chars], True
    chars = np.frombuffer(lowered.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    high = chars >= 128
    is_word = _WORD_BYTES[np.where(high, 0, chars)]
    distinct = np.unique(chars[high])
    words = distinct[[_is_word_character(c) for c in distinct.tolist()]]
    is_word[high] = np.isin(chars[high], words)
    return chars, is_word, False


def _hashes(chars: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Polynomial hash mod 2**64 of each run of ``chars`` (the runs laid end to end), from one prefix sum."""
    powers, inverse = _power_tables(len(chars) + 1)
    prefix = np.zeros(len(chars) + 1, dtype=np.uint64)
    np.cumsum(chars * powers[: len(chars)], out=prefix[1:])
    ends = np.cumsum(lengths)
    starts = ends - lengths
    hashes: NDArray[np.uint64] = (prefix[ends] - prefix[starts]) * inverse[starts]
    return hashes


def _runs(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions of every run ``[start, start + length)``, concatenated."""
    total = int(lengths.sum())
    positions: NDArray[np.intp] = np.arange(total) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return positions


def code_texts(texts: Sequence[str]) -> CodedTexts | None:
    """Each text's tokens as ids of one shared vocabulary (see the module docstring); None on a hash collision."""
    lowered, text_starts = _lowered(texts)
    chars, is_word, ascii_only = _characters(lowered)
    edges = np.flatnonzero(np.diff(is_word, prepend=False, append=False))
    starts, ends = edges[0::2], edges[1::2]
    lengths = ends - starts
    bounds = np.searchsorted(starts, text_starts)
    if not len(starts):
        return CodedTexts(np.zeros(0, dtype=np.int64), bounds, 0, lowered, text_starts)

    if ascii_only:
        padded = np.zeros(len(chars) + 8, dtype=np.uint8)
        padded[: len(chars)] = chars
        keys = np.lib.stride_tricks.sliding_window_view(padded, 8)[starts].view("<u8").ravel()
        keys &= _KEEP_BYTES[np.minimum(lengths, 8)]
        hashed = np.flatnonzero(lengths > 8)
    else:
        hashed = np.arange(len(starts))
        keys = np.empty(len(starts), dtype=np.uint64)
    hashed_lengths = lengths[hashed]
    own = _runs(starts[hashed], hashed_lengths)  # the hashed tokens' characters, token after token
    hashed_chars = chars[own]
    keys[hashed] = _hashes(hashed_chars, hashed_lengths) | (_HASHED if ascii_only else 0)
    # ``np.unique`` by hand, for any one token of each id rather than the first (its stable sort is slower).
    order = keys.argsort()
    ordered = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    ids = np.empty(len(keys), dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    first = order[new]

    # Every hashed token against one token of its id, character by character (lengths first).
    representative = first[ids[hashed]]
    if not np.array_equal(hashed_lengths, lengths[representative]):
        return None
    shift = np.repeat(starts[representative] - starts[hashed], hashed_lengths)
    if not np.array_equal(hashed_chars, chars[own + shift]):
        return None
    return CodedTexts(ids, bounds, len(first), lowered, text_starts)

"""The grader's fast paths give the same answers as the plain definitions they replace (no timing here)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.cuad.tokens import WORD, SourceIndex, grounding, groundings, tokenize, words

REPO = Path(__file__).resolve().parents[3]


def test_words_equal_the_regular_expression_on_every_character():
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    for at in range(0, len(every), 4096):
        chunk = every[at : at + 4096]
        for text in (" ".join(chunk), f"a{chunk}b", chunk.lower()):
            assert words(text) == WORD.findall(text)


def test_batched_grounding_equals_grounding_claim_by_claim():
    rng = random.Random(5)
    pieces = ["a", "b", "c", "Dé", "e_f", "7", "ü", "—", ".", " ", "Σ", "x", "\u2003"]
    for _ in range(600):
        source = "".join(rng.choice(pieces) + rng.choice(["", " ", ", "]) for _ in range(rng.randint(0, 30)))
        claims = ["".join(rng.choice(pieces) + rng.choice(["", " "]) for _ in range(rng.randint(0, 8)))
                  for _ in range(rng.randint(0, 8))]
        if source and rng.random() < 0.3:
            start = rng.randrange(len(source))
            claims.append(source[start : start + rng.randint(1, 10)])
        expected = [grounding(claim, SourceIndex(source)) for claim in claims]
        got = groundings(claims, SourceIndex(source), claim_tokens=[tokenize(claim) for claim in claims])
        assert got == expected, (source, claims)


@pytest.mark.slow  # starts a fresh Python process
def test_hungarian_is_scipys_solver_without_importing_scipy_optimize():
    script = (
        "import sys, numpy as np\n"
        "from scoring.cuad.matching import _linear_sum_assignment, hungarian\n"
        "rows, cols = hungarian(np.array([[0.5, 0.2], [0.9, 0.0]]))\n"
        "loaded_optimize = 'scipy.optimize' in sys.modules\n"
        "from scipy.optimize import linear_sum_assignment\n"
        "print(loaded_optimize, _linear_sum_assignment() is linear_sum_assignment, rows.tolist(), cols.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "[0,", "1]", "[1,", "0]"]


def test_a_source_too_long_for_integer_codes_is_grounded_claim_by_claim(monkeypatch):
    # Codes overflow only for sources of millions of tokens; pretend this one does.
    monkeypatch.setattr(SourceIndex, "gram_codes", lambda self, n: None)
    source = "the licensee shall pay royalties quarterly within thirty days of the end of each quarter"
    claims = ["licensee shall pay royalties", "pay within thirty days", "the moon is cheese", "quarterly",
              "royalties quarterly within the moon", ""]
    index = SourceIndex(source)
    got = groundings(claims, index, claim_tokens=[tokenize(claim) for claim in claims])
    assert got == [grounding(claim, SourceIndex(source)) for claim in claims]
    assert 0.0 < got[4] < 1.0  # a partly grounded claim, so the fallback did count trigrams

"""The quote locator shared by the explorer and the audit's excerpts: exact, case-insensitive, then any spacing."""

from __future__ import annotations

import random

from scoring.cuad.quotes import Located, as_utf16, locate, utf16_offset


def test_a_quote_whose_spacing_differs_is_located_whitespace_normalised():
    text = "Intro.  This   Agreement shall\nbe governed by Nevada law."
    found = locate(text, "this agreement shall be governed")
    assert (found.start, found.how) == (text.index("This"), "whitespace-normalised")
    assert text[found.start:found.end] == "This   Agreement shall\nbe governed"
    assert locate(text, "Ohio law") is None


def test_exact_comes_first_then_case_insensitive_and_the_first_occurrence_wins():
    text = "The Licensee shall pay. the licensee shall pay."
    assert locate(text, "the licensee shall pay") == Located(24, 46, "exact")
    assert locate(text, "  THE LICENSEE SHALL PAY  ") == Located(0, 22, "case-insensitive")


def test_a_blank_quote_is_found_nowhere():
    assert locate("Some contract text.", "") is None
    assert locate("Some contract text.", " \n\t") is None


def test_offsets_index_the_original_text_even_where_lowercasing_changes_its_length():
    text = "İstanbul office. The Supplier shall deliver."  # "İ".lower() is two code points
    found = locate(text, "the supplier SHALL deliver")
    assert found.how == "case-insensitive"
    assert text[found.start:found.end] == "The Supplier shall deliver"


def test_utf16_offsets_count_characters_beyond_the_bmp_twice():
    text = "😀 Clause: governed by Nevada law."
    found = locate(text, "governed by Nevada law")
    assert (found.start, found.end) == (text.index("governed"), len(text) - 1)
    browser = as_utf16(text, found)
    assert (browser.start, browser.end, browser.how) == (found.start + 1, found.end + 1, "exact")
    encoded = text.encode("utf-16-le")
    assert encoded[2 * browser.start:2 * browser.end].decode("utf-16-le") == "governed by Nevada law"
    plain = "No emoji here."
    assert as_utf16(plain, Located(3, 8, "exact")) == Located(3, 8, "exact")


def test_random_verbatim_slices_are_found_exactly_where_their_first_occurrence_is():
    rng = random.Random(7)
    words = ["party", "Party", "shall", "assign", "law", "of", "Nevada", "é", "😀", "the"]
    for _ in range(200):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
        a = rng.randrange(len(text))
        b = rng.randint(a + 1, len(text))
        quote = text[a:b]
        found = locate(text, quote)
        if not quote.strip():
            assert found is None
            continue
        assert found.how == "exact" and found.start == text.find(quote.strip())
        assert text[found.start:found.end] == quote.strip()
        assert utf16_offset(text, found.start) == len(text[:found.start].encode("utf-16-le")) // 2

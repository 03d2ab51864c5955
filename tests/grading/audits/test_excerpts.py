"""The contract excerpt a judge or a reviewer sees around a candidate, found by the shared quote locator."""

from __future__ import annotations

from grading.audits.judging.excerpts import excerpt_of


def test_the_excerpt_surrounds_the_quote_and_is_cut_at_white_space():
    text = " ".join(f"word{i}" for i in range(100)) + " The Licensee may not assign. " + " ".join(
        f"tail{i}" for i in range(100)
    )
    excerpt = excerpt_of(text, "The Licensee may not assign.", chars=30)
    assert excerpt.startswith("… ") and excerpt.endswith(" …")
    inner = excerpt[2:-2]
    assert "The Licensee may not assign." in inner and inner in text
    assert all(w.startswith(("word", "tail")) or w in "The Licensee may not assign." for w in inner.split())


def test_a_quote_with_other_spacing_or_case_is_still_centred_on_its_place_in_the_contract():
    text = "Intro. " + "x " * 50 + "This   Agreement shall\nbe governed by Nevada law. " + "y " * 50
    excerpt = excerpt_of(text, "this agreement shall be governed", chars=20)
    assert "This   Agreement shall\nbe governed" in excerpt
    assert excerpt_of(text, "NEVADA LAW", chars=5).strip("… ").startswith("by Nevada law")


def test_a_quote_found_nowhere_is_shown_alone():
    assert excerpt_of("Some contract text.", "Ohio law applies.") == "Ohio law applies."

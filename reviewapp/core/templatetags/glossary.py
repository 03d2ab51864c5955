"""``{% status_word "fallback" %}`` and ``{{ value|status_word }}``: a status word with its explanation on hover."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html

from reviewapp.core.glossary import explain

register = template.Library()


def _render(word: object, text: object | None = None) -> str:
    shown = word if text is None else text
    meaning = explain(str(word))
    if meaning is None:  # not a glossary word: shown as it is, no hover text to get wrong
        return format_html("{}", shown)
    anchor = f"{reverse('glossary')}#{str(word).strip().lower().replace(' ', '-')}"
    return format_html('<a class="status-word" href="{}" title="{}">{}</a>', anchor, meaning, shown)


@register.simple_tag(name="status_word")
def status_word_tag(word: str, text: str | None = None) -> str:
    """The word (or ``text`` in its place) linked to its glossary entry, its explanation as the title."""
    return _render(word, text)


@register.filter(name="status_word")
def status_word_filter(word: object) -> str:
    return _render(word)

"""The passage-extraction rule: what of a provision a model grades.

Versioned: a change of rule is a new rule name, and passages of both rules can
coexist. The passage is the caption (citation and heading) plus the first
words of the body, capped so a batch of candidates fits a small model's input.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewapp.core.records.hashing import sha256_json

PASSAGE_RULE = "caption+first-180-words-v1"
MAX_WORDS = 180


@dataclass(frozen=True)
class PassageText:
    rule: str
    caption: str
    text: str
    word_count: int
    truncated: bool
    sha256: str


def passage_extract(*, citation: str, heading: str, body: str, max_words: int = MAX_WORDS,
                    rule: str = PASSAGE_RULE) -> PassageText:
    """Caption + at most ``max_words`` words of the body, keeping its paragraph breaks."""
    caption = f"{citation}. {heading}".strip()
    lines: list[str] = []
    used, truncated = 0, False
    for line in body.split("\n"):
        words = line.split()
        if not words:
            continue
        if used >= max_words:
            lines[-1] += " …"
            truncated = True
            break
        if used + len(words) > max_words:
            lines.append(" ".join(words[: max_words - used]) + " …")
            used = max_words
            truncated = True
            break
        lines.append(" ".join(words))
        used += len(words)
    text = "\n".join(lines)
    digest = sha256_json({"rule": rule, "caption": caption, "text": text})
    return PassageText(rule, caption, text, used, truncated, digest)

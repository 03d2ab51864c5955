"""Versioned question definitions: the prompt and the grade rubric a rerank run pins.

A definition is a text file here (``<name>.txt``) with a ``version:`` line and three
sections (``--- system``, ``--- user``, ``--- item``). Its sha256 is taken over the
canonical JSON of {version, system, user, item}; a run stores both and refuses to
start if the file no longer matches the hash it pinned. Changing the wording means
a new version (a new file), never an edit of a used one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from reviewapp.core.records.hashing import sha256_json
from reviewapp.providers.types import GradeSpec

HERE = Path(__file__).parent
DEFAULT_VERSION = "statute-relevance-v1"


class QuestionError(ValueError):
    pass


@dataclass(frozen=True)
class Candidate:
    caption: str
    text: str


@dataclass(frozen=True)
class QuestionDefinition:
    version: str
    system: str
    user: str
    item: str

    @property
    def sha256(self) -> str:
        return sha256_json({"version": self.version, "system": self.system, "user": self.user, "item": self.item})

    def render(self, *, query: str, candidates: list[Candidate]) -> GradeSpec:
        """The grade request for one batch: the prompt for LLMs, plain texts for the local heuristic."""
        items = "\n\n".join(
            self.item.format(number=i, caption=c.caption, text=c.text) for i, c in enumerate(candidates, start=1)
        )
        return GradeSpec(
            system=self.system,
            user=self.user.format(query=query, count=len(candidates), items=items),
            query=query,
            items=tuple(f"{c.caption}\n{c.text}" for c in candidates),
        )


def _parse(raw: str, *, source: str) -> QuestionDefinition:
    lines = raw.splitlines()
    if not lines or not lines[0].startswith("version:"):
        raise QuestionError(f"{source}: line 1 must be 'version: <name>'")
    version = lines[0].split(":", 1)[1].strip()
    sections: dict[str, list[str]] = {}
    current = None
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("--- "):
            current = line[4:].strip()
            if current not in {"system", "user", "item"} or current in sections:
                raise QuestionError(f"{source}: line {number}: unexpected section {current!r}")
            sections[current] = []
        elif current is None:
            if line.strip():
                raise QuestionError(f"{source}: line {number}: text outside a section")
        else:
            sections[current].append(line)
    missing = {"system", "user", "item"} - set(sections)
    if missing:
        raise QuestionError(f"{source}: missing section(s) {', '.join(sorted(missing))}")
    text = {name: "\n".join(body).strip() for name, body in sections.items()}
    return QuestionDefinition(version=version, system=text["system"], user=text["user"], item=text["item"])


@cache
def question_definitions() -> dict[str, QuestionDefinition]:
    out = {}
    for path in sorted(HERE.glob("*.txt")):
        definition = _parse(path.read_text(encoding="utf-8"), source=path.name)
        if definition.version in out:
            raise QuestionError(f"{path.name}: version {definition.version!r} defined twice")
        out[definition.version] = definition
    return out


def question_get(version: str, *, sha256: str | None = None) -> QuestionDefinition:
    try:
        definition = question_definitions()[version]
    except KeyError:
        raise QuestionError(f"unknown question version {version!r}") from None
    if sha256 is not None and definition.sha256 != sha256:
        raise QuestionError(
            f"question {version!r} changed since it was pinned ({sha256[:12]} != {definition.sha256[:12]})"
        )
    return definition

"""The clause-heading / keyword rule CUAD baseline: a few patterns per clause type, no learning.

Per clause type, a short list of heading patterns ("Governing Law") and
keyword patterns ("governed by the laws of"), written from CUAD's category
descriptions (category_descriptions.csv) and ordinary contract drafting, not
tuned on any contract's labels. The unit returned is a verbatim passage of the
contract (the local extractor's ``split_passages``: a sentence or line merged
up to 12 words, so a short heading travels with the sentence after it):

- a passage scores 2 when it opens with one of the type's headings (after any
  numbering such as "12.3" or "Section 7."), plus 1 when it contains one of
  the type's keywords; the best-scoring passage is returned (ties: the first in
  the document), one per type.
- Four types whose CUAD answers are short strings take a short verbatim slice
  instead of a passage: Document Name (the first upper-case title line naming
  an agreement), Parties (the names after "between ... and ..." in the
  preamble), Agreement Date (the first date in the preamble) and Effective
  Date (a date in a passage that says "effective").

Deterministic; no confidence (the score is a rule count, not a probability).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from grading.runs.local_extractor import Found, Passage, split_passages

PER_TYPE = 1
PREAMBLE_CHARS = 3000  # where title, parties and the agreement date are looked for

# The patterns are lower case and matched against lower-cased passages: about twice as fast as IGNORECASE.
_F = re.DOTALL


@dataclass(frozen=True)
class Rule:
    headings: tuple[str, ...] = ()  # regular expressions, matched at a passage's start (after numbering)
    keywords: tuple[str, ...] = ()  # regular expressions, searched anywhere in a passage


# Written from CUAD's one-line description of each type (quoted in the comments where it names the words).
RULES: dict[str, Rule] = {
    "Expiration Date": Rule(
        ("term(?: and termination)?", "term of (?:the )?agreement", "duration"),
        (r"initial term", r"shall (?:expire|terminate) on", r"shall (?:continue|remain) in (?:full )?force and effect "
         r"(?:until|for)", r"expiration date", r"for a (?:period|term) of \w+ \(?\d*\)? ?(?:years?|months?)"),
    ),
    "Renewal Term": Rule(
        ("renewal",),
        (r"automatically (?:be )?(?:renew|extend)", r"renewal term", r"successive (?:one|two|three|\w+)?[- ]?"
         r"\(?\d*\)?[- ]?(?:year|month)", r"(?:renew|extend)ed for (?:an )?additional"),
    ),
    "Notice Period to Terminate Renewal": Rule(
        (),
        (r"notice of (?:its )?(?:intention|intent|election) not to renew", r"notice of non-?renewal",
         r"(?:days|months)'? (?:prior )?(?:written )?notice.{0,80}(?:not to renew|non-?renewal|prior to the "
         r"(?:end|expiration) of the (?:then[- ]current|initial|renewal) term)"),
    ),
    "Governing Law": Rule(
        ("governing law", "choice of law", "applicable law", "law and jurisdiction"),
        (r"governed by(?:,)? (?:and construed )?(?:in accordance with )?the laws? of",
         r"construed (?:and (?:enforced|interpreted) )?in accordance with the laws? of",
         r"governed by and construed", r"laws of the (?:state|commonwealth|province) of .{0,80}shall (?:govern|apply)"),
    ),
    "Most Favored Nation": Rule(
        ("most favou?red",),
        (r"most favou?red", r"(?:no )?less favou?rable (?:terms|than)", r"more favou?rable (?:terms|prices?|pricing)",
         r"(?:lowest|best) price"),
    ),
    "Non-Compete": Rule(
        ("non-?compet\\w*", "covenant not to compete", "competition"),
        (r"shall not,? (?:directly or indirectly,? )?(?:engage|compete|manufacture|market|sell|distribute)"
         r".{0,80}compet", r"non-?compet", r"\bcompete with", r"competing products?", r"competitive products?"),
    ),
    "Exclusivity": Rule(
        ("exclusivity",),
        (r"(?<!non-)(?<!non)\bexclusive (?:right|distributor|supplier|basis|license|territory|dealing)",
         r"\bexclusively\b", r"shall not appoint any other", r"(?:all|one hundred percent).{0,40}requirements"),
    ),
    "No-Solicit of Customers": Rule(
        (),
        (r"solicit.{0,80}(?:customers|clients|partners)", r"(?:customers|clients).{0,80}solicit",
         r"interfere with.{0,60}(?:customer|client)"),
    ),
    "Competitive Restriction Exception": Rule(
        (),
        (r"(?:notwithstanding|nothing (?:herein|in this)).{0,200}(?:compet|exclusiv|solicit)",
         r"shall not (?:be deemed to )?(?:prevent|restrict|prohibit|limit).{0,120}(?:compet|sell|market|distribut)",
         r"(?:compet|exclusiv|solicit).{0,120}(?:provided, however|except (?:that|for|as))"),
    ),
    "No-Solicit of Employees": Rule(
        ("non-?solicitation(?: of employees)?",),
        (r"solicit.{0,100}(?:employees?|personnel|staff|consultants|contractors)",
         r"(?:hire|employ|engage).{0,60}(?:employees?|personnel) of the other"),
    ),
    "Non-Disparagement": Rule(("non-?disparagement",), (r"disparag",)),
    "Termination for Convenience": Rule(
        ("termination for convenience",),
        (r"terminate this agreement (?:at any time )?(?:for (?:any|no) reason|without cause|for convenience)",
         r"for convenience", r"without cause", r"terminate this agreement at any time(?:,)? (?:by|upon|with)"),
    ),
    "Rofr/Rofo/Rofn": Rule(
        ("right of first (?:refusal|offer|negotiation)",),
        (r"right of first (?:refusal|offer|negotiation)", r"first right (?:of|to) (?:refusal|offer|negotiat)"),
    ),
    "Change of Control": Rule(
        ("change (?:of|in) control",),
        (r"change (?:of|in) (?:the )?control", r"merger|consolidat(?:e|ion) with",
         r"(?:sale|transfer) of (?:all or )?substantially all", r"by operation of law"),
    ),
    "Anti-Assignment": Rule(
        ("assignment", "assignability", "no assignment", "assignment and delegation"),
        (r"(?:may|shall) not (?:be )?assign", r"assign.{0,120}without (?:the )?(?:prior )?(?:written )?consent",
         r"not (?:be )?(?:assignable|transferable) (?:by|without)"),
    ),
    "Revenue/Profit Sharing": Rule(
        ("royalt(?:y|ies)", "revenue shar\\w*", "profit shar\\w*"),
        (r"royalt(?:y|ies)", r"revenue[- ]shar", r"profit[- ]shar",
         r"(?:percent|%)\)? of (?:the )?(?:net|gross) (?:sales|revenues?|receipts|profits?)"),
    ),
    "Price Restrictions": Rule(
        ("price protection",),
        (r"prices? (?:shall|will) (?:not|remain) (?:be )?(?:increase|change|fixed|firm)",
         r"(?:increase|change|raise).{0,40}prices?.{0,60}(?:not|more than once|no more than)",
         r"price protection", r"prices? (?:shall|will) not exceed"),
    ),
    "Minimum Commitment": Rule(
        ("minimum (?:purchase|order|commitment)s?",),
        (r"minimum (?:purchase|order|quantity|quantities|annual|commitment|volume|amount)",
         r"(?:purchase|order|buy) (?:at least|a minimum of|not less than)"),
    ),
    "Volume Restriction": Rule(
        (),
        (r"(?:exceed|in excess of).{0,60}(?:volume|usage|number of (?:users|units|copies)|limit|cap\b)",
         r"additional (?:fees?|charges?).{0,80}(?:usage|exceed|excess)", r"(?:usage|volume) (?:limit|cap)"),
    ),
    "IP Ownership Assignment": Rule(
        ("ownership(?: of (?:work product|intellectual property|deliverables))?", "intellectual property"),
        (r"hereby (?:irrevocably )?assigns?",
         r"shall (?:be|become|remain) the (?:sole and )?(?:exclusive )?property of",
         r"works? made for hire", r"right, title and interest.{0,100}shall (?:vest|belong|be owned)"),
    ),
    "Joint IP Ownership": Rule(
        ("joint ownership",),
        (r"jointly (?:own|owned|held)", r"joint(?:ly)? ownership", r"\bco-?own", r"owned jointly"),
    ),
    "License Grant": Rule(
        ("(?:grant of )?licen[cs]e(?: grant)?",),
        (r"hereby grants?.{0,160}licen[cs]e", r"grants? to .{0,100}(?:a|an) .{0,80}licen[cs]e"),
    ),
    "Non-Transferable License": Rule(
        (),
        (r"non-?transferable", r"non-?assignable", r"licen[cs]e.{0,120}may not (?:be )?(?:transfer|assign|sublicens)"),
    ),
    "Affiliate License-Licensor": Rule(
        (),
        (r"licensor(?:,)? (?:and|or) (?:its|their) affiliates", r"affiliates of (?:the )?licensor",
         r"(?:its|their) affiliates.{0,40}(?:hereby )?grants?"),
    ),
    "Affiliate License-Licensee": Rule(
        (),
        (r"licensee(?:,)? (?:and|or) (?:its|their) affiliates", r"affiliates of (?:the )?licensee",
         r"grants? to .{0,60}(?:and|or) (?:its|their) (?:affiliates|subsidiaries)"),
    ),
    "Unlimited/All-You-Can-Eat-License": Rule(
        (),
        (r"unlimited (?:number|use|copies|users|licen[cs]e)", r"all[- ]you[- ]can[- ]eat", r"enterprise[- ]wide",
         r"enterprise licen[cs]e"),
    ),
    "Irrevocable or Perpetual License": Rule(
        (),
        (r"irrevocable.{0,80}licen[cs]e", r"perpetual.{0,80}licen[cs]e",
         r"licen[cs]e.{0,80}(?:irrevocable|perpetual)"),
    ),
    "Source Code Escrow": Rule(("(?:source code )?escrow",), (r"escrow",)),
    "Post-Termination Services": Rule(
        ("effect of termination", "rights and obligations (?:up)?on termination", "post-?termination"),
        (r"(?:upon|after|following) (?:the )?(?:termination|expiration).{0,160}(?:shall|continue|transition|return|"
         r"sell|wind)", r"sell[- ]off period", r"transition (?:period|services|assistance)", r"post-?termination"),
    ),
    "Audit Rights": Rule(
        ("audits?(?: rights)?", "(?:books and )?records(?: and audits?)?", "inspection"),
        (r"\baudit", r"inspect.{0,60}(?:books|records|facilities|premises)",
         r"(?:books|records).{0,100}(?:inspect|examin|audit)"),
    ),
    "Uncapped Liability": Rule(
        (),
        (r"(?:limitations?|exclusions?|foregoing|cap).{0,60}shall not apply (?:to|in)",
         r"unlimited liability", r"(?:except|excluding).{0,40}(?:breach of (?:section|confidential)|indemnif|gross "
         r"negligence|willful misconduct).{0,120}(?:liab|exceed)"),
    ),
    "Cap on Liability": Rule(
        ("limitation(?:s)? (?:of|on) liability", "limited liability"),
        (r"(?:total|aggregate|maximum|cumulative|entire) liability", r"in no event shall.{0,160}(?:liab|exceed)",
         r"liability.{0,120}shall not exceed", r"(?:action|claim).{0,80}(?:must|may) (?:only )?be (?:brought|commenced)"
         r" within"),
    ),
    "Liquidated Damages": Rule(
        ("liquidated damages",), (r"liquidated damages", r"termination fee", r"break[- ]?up fee"),
    ),
    "Warranty Duration": Rule(
        ("warrant(?:y|ies)(?: period)?",),
        (r"warrant.{0,160}(?:for a period of|period of) .{0,30}(?:days|months|years)", r"warranty period"),
    ),
    "Insurance": Rule(("insurance",), (r"\binsurance\b", r"additional insured")),
    "Covenant Not to Sue": Rule(
        ("covenant not to sue", "no challenge"),
        (r"covenant not to sue", r"not (?:to )?(?:contest|challenge|dispute).{0,100}(?:validity|ownership|rights)",
         r"shall not.{0,60}(?:contest|challenge|attack).{0,80}(?:validity|ownership)"),
    ),
    "Third Party Beneficiary": Rule(
        ("(?:no )?third[- ]party beneficiar(?:y|ies)",), (r"third[- ]party beneficiar",),
    ),
}

# Short-answer types.
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan\.?|Feb\.?|" \
         r"Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sept?\.?|Oct\.?|Nov\.?|Dec\.?)"
DATE = re.compile(
    rf"\b(?:{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}"  # June 1, 2005
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?{_MONTH},?\s+\d{{4}}"  # 1st day of June, 2005 / 1 June 2005
    r"|\d{1,2}/\d{1,2}/\d{2,4})",  # 06/01/2005
    re.IGNORECASE,
)
TITLE = re.compile(
    r"\b[A-Z][A-Z0-9&,'\-/ ]{0,80}?\b(?:AGREEMENT|CONTRACT|LICENSE|AMENDMENT|ADDENDUM|MEMORANDUM OF UNDERSTANDING"
    r"|PLAN|DEED|LEASE)\b(?![a-z])"
)
PARTIES = re.compile(
    r"\bbetween\s+(?P<a>[A-Z][^,;(\n]{1,100}?)\s*(?:,|\(|;|\n).{0,400}?\band\s+(?P<b>[A-Z][^,;(\n]{1,100}?)"
    r"\s*(?:,|\(|;|\.|\n)",
    re.DOTALL,
)
EFFECTIVE = re.compile(r"effective", re.IGNORECASE)
# A contract's lower-cased passages are searched as one string, each preceded by SEP (one regex scan per
# pattern and contract rather than one call per passage: a third of the time). A pattern's ".{m,n}" becomes
# "[^SEP]{m,n}" and a heading is anchored just after SEP, so no match spans two passages.
SEP = "\x00"
_NUMBERING = SEP + r"\s*(?:(?:article|section|clause)\s+)?(?:[0-9ivxlc]+[.)]?(?:\d+[.)]?)*|[a-z][.)])?\s*"


@dataclass(frozen=True)
class _Compiled:
    heading: re.Pattern[str] | None
    keywords: tuple[re.Pattern[str], ...]  # one pattern each: faster than one alternation in Python's re


def _within_passage(pattern: str) -> str:
    return pattern.replace(".{", f"[^{SEP}]{{")


def _compile(rule: Rule) -> _Compiled:
    heading = re.compile(_NUMBERING + "(?:" + "|".join(rule.headings) + r")\b", _F) if rule.headings else None
    return _Compiled(heading, tuple(re.compile(_within_passage(k), _F) for k in rule.keywords))


COMPILED = {name: _compile(rule) for name, rule in RULES.items()}


def _slice(text: str, start: int, end: int, category: str) -> Found:
    return Found(category, start, end, text[start:end], 1.0)


def _short_answers(text: str, categories: Sequence[str], passages: Sequence[Passage]) -> list[Found]:
    head = text[:PREAMBLE_CHARS]
    out: list[Found] = []
    if "Document Name" in categories and (m := TITLE.search(head)):
        out.append(_slice(text, m.start(), m.end(), "Document Name"))
    if "Parties" in categories and (m := PARTIES.search(head)):
        for group in ("a", "b"):
            out.append(_slice(text, m.start(group), m.end(group), "Parties"))
    if "Agreement Date" in categories and (m := DATE.search(head)):
        out.append(_slice(text, m.start(), m.end(), "Agreement Date"))
    if "Effective Date" in categories:
        for p in passages:
            if EFFECTIVE.search(p.text) and (m := DATE.search(p.text)):
                out.append(_slice(text, p.start + m.start(), p.start + m.end(), "Effective Date"))
                break
    return out


def rule_extract(text: str, categories: Sequence[str]) -> list[Found]:
    """The rule baseline's extractions from one contract, for the clause types among ``categories``.

    ``Found.score`` is the rule score (heading 2 + keyword 1; 1.0 for a short answer).
    """
    passages = split_passages(text)
    found = _short_answers(text, categories, passages)
    joined = "".join(SEP + p.text.lower() for p in passages)
    starts = list(itertools.accumulate((len(p.text) + 1 for p in passages), initial=0))[:-1]
    for name in categories:
        compiled = COMPILED.get(name)
        if compiled is None:
            continue
        score: dict[int, int] = {}
        if compiled.heading is not None:
            for m in compiled.heading.finditer(joined):
                i = bisect.bisect_right(starts, m.start()) - 1
                score[i] = score.get(i, 0) | 2
        for pattern in compiled.keywords:
            for m in pattern.finditer(joined):
                i = bisect.bisect_right(starts, m.start()) - 1
                score[i] = score.get(i, 0) | 1
        for i in sorted(score, key=lambda i: (-score[i], i))[:PER_TYPE]:
            p = passages[i]
            found.append(Found(name, p.start, p.end, p.text, float(score[i])))
    return found


def rules_params() -> dict:
    """What the rules are, as recorded beside the run (so a run says how it was produced)."""
    return {
        "method": "clause-heading / keyword rules (heading 2 + keyword 1, best passage per type)",
        "per_type": PER_TYPE,
        "preamble_chars": PREAMBLE_CHARS,
        "types_with_rules": len(RULES) + 4,
    }

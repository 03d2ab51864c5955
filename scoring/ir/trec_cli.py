"""``relevance_metrics`` without Django: parse TREC files, score them, print a table or JSON.

``manage.py relevance_metrics`` (benchmarks/management/commands/relevance_metrics.py) adds the one thing
that needs the database, the held-out exposure ledger (``--retrieval-run``/``--rerank-run``). Without those
options the command is arithmetic over files, and ``manage.py`` runs it here (:func:`parse_without_django`,
:func:`run`) before Django loads: starting Django and Celery was most of the process at 1,000 queries (about
0.3 s of CPU beside ir_measures' 0.33 s for the whole job). Both paths print the same bytes; ``--help``
stays with Django's command, which documents every option.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from scoring.collector import collector_paused
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, UNIT
from scoring.ir.measures import DEFAULT_REL_LEVEL
from scoring.ir.trec_evaluation import METRICS, TrecEvaluation, evaluate_trec_runs, read_families
from scoring.ir.trec_io import TrecFormatError, read_qrels, read_run
from scoring.stats.bootstrap import Interval
from scoring.stats.multiple import MULTIPLE_COMPARISON_METHOD
from scoring.stats.units import p_value_text, unit_support

COMMAND = "relevance_metrics"

RUN_ORDER_NOTE = "runs ordered by score descending, ties by docid descending (trec_eval); rank column ignored"
POPULATION_NOTE = "mean over every qrels query; a query the run does not answer, or with no relevant document, scores 0"
HELP = (
    "Ranking measures (default Hit@1, Hit@5, Hit@10 and RR; -m P@5 nDCG@10 AP R@100 Success@10 ... as "
    "ir_measures names them, each equal to trec_eval's) of TREC runs ('qid Q0 docid rank score tag', later "
    "fields ignored as trec_eval does) against TREC qrels ('qid 0 docid rel', relevant = rel >= --rel-level), "
    "with percentile bootstrap intervals over query families and Holm-adjusted comparisons of every pair of runs. "
    "Families file: one 'qid family' per line; without it each query is its own family."
)


class MetricsError(Exception):
    """Bad input (a file, a line, an option), with a message that names it."""


def add_file_arguments(parser: argparse.ArgumentParser) -> None:
    """The options both entry points share."""
    parser.add_argument("--qrels", required=True, help="TREC qrels file: qid 0 docid rel")
    parser.add_argument("--run", action="append", required=True, help="TREC run file (repeat for several runs)")
    parser.add_argument("--families", help="file of 'qid family' lines; default: each query its own family")
    parser.add_argument("--replicates", type=int, default=DEFAULT_REPLICATES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("-m", "--measure", nargs="+", action="extend", metavar="MEASURE",
                        help="measures by ir_measures' names: P@k, R@k, nDCG[@k], AP[@k] (alias MAP), RR, "
                             "Success@k (alias Hit@k), Rprec; default: " + " ".join(METRICS))
    parser.add_argument("-l", "--rel-level", type=int, default=DEFAULT_REL_LEVEL,
                        help="relevance level: a document is relevant when its qrels grade is at least this "
                             "(trec_eval's -l; binary measures only, nDCG uses the grades)")


class _NotForUs(Exception):
    """The options are not plain file options: Django's command takes them (and words any error)."""


class _FastParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotForUs


def parse_without_django(argv: Sequence[str]) -> argparse.Namespace | None:
    """The options, when every one of them is a file option; None hands the command to Django.

    Anything else goes to Django's command: the ledger options (which need the database), Django's own
    options (``--settings``, ``-v``, ``--help``), abbreviations and usage errors. So the fast path never
    answers differently from Django's, it only answers sooner.
    """
    parser = _FastParser(prog=f"manage.py {COMMAND}", add_help=False, allow_abbrev=False)
    add_file_arguments(parser)
    try:
        options, unknown = parser.parse_known_args(list(argv))
    except _NotForUs:
        return None
    return None if unknown else options


def _run_name(path: str, earlier: list[str]) -> str:
    # The same file given twice still needs two keys in the JSON.
    repeats = earlier.count(path)
    return path if repeats == 0 else f"{path} (#{repeats + 1})"


def evaluate_files(qrels_path: str, run_paths: list[str], *, families_path: str | None, replicates: int,
                   seed: int, measures: list[str] | None = None,
                   rel_level: int = DEFAULT_REL_LEVEL) -> TrecEvaluation:
    """Reads and scores the files; every input problem is a :class:`MetricsError` naming the file."""
    if replicates < 1:
        raise MetricsError("--replicates must be at least 1")
    # Reading a run makes millions of tuples and strings that hold no cycle: scoring.collector says why.
    with collector_paused():
        return _evaluate_files(qrels_path, run_paths, families_path=families_path, replicates=replicates,
                               seed=seed, measures=measures, rel_level=rel_level)


def _evaluate_files(qrels_path: str, run_paths: list[str], *, families_path: str | None, replicates: int,
                    seed: int, measures: list[str] | None, rel_level: int) -> TrecEvaluation:
    try:
        qrels = read_qrels(qrels_path)
        # A generator: each run file is read, scored and released before the next one is read.
        runs = ((_run_name(path, run_paths[:i]), read_run(path)) for i, path in enumerate(run_paths))
        families = read_families(families_path) if families_path else None
        return evaluate_trec_runs(qrels, runs, families=families, replicates=replicates, seed=seed,
                                  measures=measures or METRICS, rel_level=rel_level)
    except TrecFormatError as exc:
        raise MetricsError(str(exc)) from exc
    except OSError as exc:
        raise MetricsError(f"{exc.filename}: {exc.strerror}") from exc
    except ValueError as exc:
        raise MetricsError(str(exc)) from exc


def _interval(bootstrap: Interval) -> dict[str, float | str | None]:
    return {"estimate": _finite(bootstrap.estimate), "low": _finite(bootstrap.low), "high": _finite(bootstrap.high),
            "level": bootstrap.level, "note": bootstrap.note}


def _bounds(interval: Interval, spec: str) -> str:
    """"  [0.2500, 0.7500]", with the note in words when there is one (no bounds: only the note)."""
    if not interval.has_bounds:
        return f"  ({interval.note})" if interval.note else ""
    text = f"  [{format(interval.low, spec)}, {format(interval.high, spec)}]"
    return f"{text} ({interval.note})" if interval.note else text


def families_note(evaluation: TrecEvaluation, families_path: str | None) -> str:
    if families_path is None:
        return f"no families file: each of the {len(evaluation.queries)} queries is its own family"
    return f"{evaluation.families} families from {families_path}"


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


def pairs_json(evaluation: TrecEvaluation) -> list[dict[str, Any]]:
    """Every pair of runs (a - b, a the later run), per metric: difference, interval, p and Holm-adjusted p."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for pair in evaluation.pairs:
        entry = out.setdefault((pair.a, pair.b), {"a": pair.a, "b": pair.b, "metrics": {}})
        difference = pair.bootstrap.difference
        entry["metrics"][pair.metric] = {
            "diff": _finite(difference.estimate), "ci": [_finite(difference.low), _finite(difference.high)],
            "level": difference.level, "note": difference.note,
            "p_value": _finite(pair.p_value), "p_adjusted": _finite(pair.p_adjusted),
        }
    return list(out.values())


def as_json(evaluation: TrecEvaluation, families_path: str | None) -> dict[str, Any]:
    measures = evaluation.measures
    return {
        "runs": {
            run.name: {
                "per_query": run.per_query,
                "mean": {metric: _finite(run.intervals[metric].interval.estimate) for metric in measures},
                "ci": {metric: _interval(run.intervals[metric].interval) for metric in measures},
                "queries_not_in_run": run.unanswered,
                "run_queries_not_in_qrels": run.ignored,
            }
            for run in evaluation.runs
        },
        "differences": [
            {
                "run": name,
                "baseline": baseline,
                "ci": {metric: _interval(result[metric].difference) for metric in measures},
            }
            for name, baseline, result in evaluation.differences
        ],
        "pairs": pairs_json(evaluation),
        "multiple_comparisons": MULTIPLE_COMPARISON_METHOD + "; Holm's family is the pairs of one metric",
        "queries": len(evaluation.queries),
        "queries_without_relevant_documents": evaluation.queries_without_targets,
        "families": families_note(evaluation, families_path),
        "units": unit_support(evaluation.families, unit=UNIT).as_json(),
        "replicates": evaluation.replicates,
        "seed": evaluation.seed,
        "interval": "percentile 95% bootstrap over query families",
        "notes": [POPULATION_NOTE, RUN_ORDER_NOTE],
        "measures": list(measures),
        "relevance_level": evaluation.rel_level,
    }


def json_text(out: dict[str, Any]) -> str:
    return json.dumps(out, indent=2, sort_keys=True)


def write_table(evaluation: TrecEvaluation, families_path: str | None, write: Callable[[str], object]) -> None:
    # Seven columns fit the default names; a longer name widens the column rather than break the alignment.
    width = max(7, *(len(metric) for metric in evaluation.measures))
    write(f"{len(evaluation.queries)} qrels queries; {families_note(evaluation, families_path)}")
    write(f"percentile 95% intervals, {evaluation.replicates} replicates, seed {evaluation.seed}")
    support = unit_support(evaluation.families, unit=UNIT)
    if support.sentence:
        write(f"note: {support.sentence}")
    write(f"note: {POPULATION_NOTE}")
    write(f"note: {RUN_ORDER_NOTE}")
    if evaluation.rel_level != DEFAULT_REL_LEVEL:
        write(f"note: relevant = qrels grade >= {evaluation.rel_level} (binary measures; nDCG uses the grades)")
    if evaluation.queries_without_targets:
        write(f"note: {len(evaluation.queries_without_targets)} qrels queries have no relevant document")
    for run in evaluation.runs:
        write("")
        write(f"run {run.name}")
        if run.unanswered:
            write(f"  {len(run.unanswered)} qrels queries not in this run (scored 0)")
        if run.ignored:
            write(f"  {len(run.ignored)} run queries not in the qrels (ignored)")
        for metric in evaluation.measures:
            iv = run.intervals[metric].interval
            write(f"  {metric:<{width}} {iv.estimate:.4f}{_bounds(iv, '.4f')}")
    for name, baseline, result in evaluation.differences:
        write("")
        write(f"paired difference {name} - {baseline}")
        for metric in evaluation.measures:
            iv = result[metric].difference
            write(f"  {metric:<{width}} {iv.estimate:+.4f}{_bounds(iv, '+.4f')}")
    if evaluation.pairs:
        write("")
        write(f"every pair of runs: {MULTIPLE_COMPARISON_METHOD}; Holm's family is the pairs of one metric")
        for pair in evaluation.pairs:
            iv = pair.bootstrap.difference
            p_text = p_value_text(pair.p_value, replicates=evaluation.replicates, digits=4)
            holm_text = p_value_text(pair.p_adjusted, replicates=evaluation.replicates, digits=4)
            write(f"  {pair.metric:<{width}} {pair.a} - {pair.b}  {iv.estimate:+.4f}{_bounds(iv, '+.4f')}"
                  f"  p {p_text}  Holm p {holm_text}")


def run(options: argparse.Namespace, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Scores the files ``options`` name and prints; returns the exit status.

    Bad input prints ``CommandError: ...`` and exits 1, as Django's command does, so a script cannot tell
    which path ran.
    """
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        evaluation = evaluate_files(options.qrels, options.run, families_path=options.families,
                                    replicates=options.replicates, seed=options.seed, measures=options.measure,
                                    rel_level=options.rel_level)
    except MetricsError as exc:
        stderr.write(f"CommandError: {exc}\n")
        return 1
    if options.json:
        out = as_json(evaluation, options.families)
        out["heldout_exposure"] = None  # no run given, so nothing was recorded (Django's path says the same)
        stdout.write(json_text(out) + "\n")
    else:
        write_table(evaluation, options.families, lambda line: stdout.write(line + "\n"))
    return 0

"""Demo data for the CUAD console (call after ``grading.demo.load_demo``): two runs a stakeholder can compare.

1. A synthetic, pasted-style run over the demo sample: CUAD gold with known
   errors injected (as the grader self-test does: truncations, paraphrases,
   fabricated clauses, dropped spans), imported through the same validation and
   pair scoring as any pasted run. Seeded, so ``make demo`` is idempotent.
2. The local heuristic-baseline extractor on the same sample, queued as a
   Celery job (the ``make demo`` worker runs it; about a minute for 100
   contracts). Queued once: a second ``make demo`` finds the job and leaves it.
"""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np

from grading.dataset.models import Contract, Sample, Span
from grading.dataset.selectors import dataset_current, sample_contract_ids
from grading.runs.jobs import extraction_job_create
from grading.runs.models import ConsoleJob, ExtractionRun
from grading.runs.services import extraction_run_import

SYNTHETIC_MODEL = "synthetic: CUAD gold with injected errors"
FABRICATED = (
    "The Distributor shall deliver seventeen violet hippopotami to the lunar warehouse every alternate solstice.",
    "Licensor grants the Licensee a perpetual zeppelin franchise payable in saffron and antique harpsichords.",
    "Each Party waives its right to tango competitions held beneath any submarine owned by the other Party.",
)
_WORD = re.compile(r"\w+")


def synthetic_run(*, sample: Sample, seed: int = 7) -> dict:
    """Gold spans of the sample's contracts with seeded errors (10% truncated, 5% reworded, 8% dropped)."""
    rng = np.random.default_rng(seed)
    ids = sample_contract_ids(sample=sample)
    titles = dict(Contract.objects.filter(pk__in=ids).values_list("id", "title"))
    extractions = []
    spans = (
        Span.objects.filter(contract_id__in=ids)
        .order_by("contract_id", "category__position", "answer_index")
        .values_list("contract_id", "category__name", "text")
    )
    for contract_id, category, text in spans:
        roll = rng.random()
        words = list(_WORD.finditer(text))
        if roll < 0.08:
            continue  # dropped -> Missed
        if roll < 0.18 and len(words) >= 8:
            text = text[: words[len(words) // 2 - 1].end()]  # truncated -> Partial (or Incorrect)
        elif roll < 0.23 and len(words) >= 6:
            text = " ".join(w.group() for w in reversed(words))  # paraphrase -> Hallucinated
        extractions.append({"contract": titles[contract_id], "category": category, "text": text})
    for k, contract_id in enumerate(ids[::5]):
        extractions.append(
            {"contract": titles[contract_id], "category": "Cap on Liability", "text": FABRICATED[k % len(FABRICATED)]}
        )
    return {"model": SYNTHETIC_MODEL, "extractions": extractions}


def load_console_demo(*, data_dir: pathlib.Path, stdout, queue_local: bool = True) -> None:
    dataset = dataset_current()
    sample = Sample.objects.filter(dataset=dataset).order_by("-created_at", "-id").first() if dataset else None
    if dataset is None or sample is None:
        stdout.write("grading console: no sample; run grading.demo.load_demo first\n")
        return
    run, created = extraction_run_import(
        dataset=dataset, raw=json.dumps(synthetic_run(sample=sample)), source_name="demo synthetic run"
    )
    ExtractionRun.objects.filter(pk=run.pk).update(synthetic=True)
    stdout.write(
        f"grading console: synthetic run #{run.pk} {'imported' if created else 'present'} "
        f"({run.n_extractions} extractions)\n"
    )
    if not queue_local:
        return
    existing = ConsoleJob.objects.filter(kind=ConsoleJob.Kind.EXTRACT, provider="local", sample=sample).exclude(
        status=ConsoleJob.Status.FAILED
    )
    if (found := existing.first()) is not None:
        stdout.write(f"grading console: local extraction job #{found.pk} already {found.status}\n")
        return
    job = extraction_job_create(sample=sample, provider="local")
    stdout.write(
        f"grading console: local heuristic-baseline extraction queued as job #{job.pk} ({job.total} contracts; "
        "the demo worker runs it, progress at /cuad/runs/jobs/{job.pk}/)\n".replace("{job.pk}", str(job.pk))
    )

"""An audit's JSON and CSV exports (the API serializes the same JSON)."""

from __future__ import annotations

import numpy as np

from grading.audits.models import Audit, AuditJudge, AuditVerdict
from grading.audits.selectors import VERDICT_CATEGORIES, AuditReport, CandidateRow
from reviewapp.jobs.controls import job_api_state


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def judge_json(j: AuditJudge) -> dict:
    return {
        "slot": j.slot,
        "provider": j.provider,
        "model_id": j.model_id,
        "method": j.method,
        "heuristic": j.heuristic,
        "label": j.label,
        "params": j.params,
        "ledger": j.ledger_id,
        "base_url": j.provider_setup.get("base_url", ""),
        "simulated": j.simulated,
    }


def verdict_json(v: AuditVerdict | None) -> dict | None:
    if v is None:
        return None
    return {"verdict": "yes" if v.verdict else "no", "reason": v.reason, "score": v.score, "receipt": v.receipt_id}


def candidate_json(r: CandidateRow) -> dict:
    c = r.candidate
    return {
        "id": c.pk,
        "position": c.position,
        "extraction": c.extraction_id,
        "contract": r.contract,
        "category": r.category,
        "text": c.text,
        "grounding": c.grounding,
        "judges": {slot: verdict_json(v) for slot, v in r.verdicts.items()},
        "both_yes": r.both_yes,
        "human": None
        if r.human is None
        else {"state": r.human.state, "value": r.human.value, "reason": r.human.reason, "completed": r.human.completed},
    }


def audit_summary_json(audit: Audit) -> dict:
    return {
        "id": audit.pk,
        "run": audit.run_id,
        "model": audit.run.model if audit.run is not None else None,
        "job": audit.job_id,
        "sample": audit.sample_id,
        "status": audit.status,
        "state": job_api_state(audit),
        "stage": audit.stage,
        "error": audit.error,
        "thresholds": {"correct": audit.correct, "partial": audit.partial, "grounding": audit.grounding},
        "matcher": audit.matcher,
        "candidates": audit.n_candidates,
        "created_at": audit.created_at.isoformat(),
        "finished_at": audit.finished_at.isoformat() if audit.finished_at else None,
    }


def audit_json(report: AuditReport) -> dict:
    agreement = report.agreement
    impact = report.impact
    return {
        "audit": audit_summary_json(report.audit),
        "judges": [judge_json(j) for j in report.judges],
        "progress": {"ruled": report.ruled, "total": report.total_rulings},
        "agreement": None
        if agreement is None
        else {
            "n": agreement.n,
            "excluded": agreement.excluded,
            "kappa": _num(agreement.kappa),
            "band": agreement.band,
            "raw_agreement": _num(agreement.raw_agreement),
            "kappa_interval": agreement.kappa_interval.as_dict(),
            "raw_agreement_interval": agreement.raw_agreement_interval.as_dict(),
            "agreements": agreement.agreements,
            "ac1": _num(agreement.ac1),
            "ac1_interval": agreement.ac1_interval.as_dict() if agreement.ac1_interval is not None else None,
            "pabak": _num(agreement.pabak),
            "prevalence": dict(agreement.prevalence),
            "paradox_note": agreement.paradox_note,
            "table": {
                "rows": "judge a",
                "columns": "judge b",
                "labels": list(VERDICT_CATEGORIES),
                "counts": agreement.table,
            },
        },
        "impact": None
        if impact is None
        else {
            "thresholds": impact.thresholds.as_dict(),
            "bootstrap": {"replicates": impact.replicates, "seed": impact.seed, "contracts": impact.n_contracts},
            "rows": [
                {"key": r.key, "label": r.label, "credited": r.credited, **r.figures.as_dict()} for r in impact.rows
            ],
            "per_category": [
                {
                    "category": c.category,
                    "candidates": c.candidates,
                    "both_yes": c.both_yes,
                    "before": c.before.as_dict(),
                    "after": c.after.as_dict(),
                }
                for c in impact.per_category
            ],
        },
        "review_pool": None if report.pool is None else report.pool.public_id,
        "candidates": [candidate_json(r) for r in report.rows],
    }


CSV_FIELDS = (
    "id",
    "contract",
    "category",
    "grounding",
    "judge_a",
    "judge_a_reason",
    "judge_a_score",
    "judge_b",
    "judge_b_reason",
    "judge_b_score",
    "both_yes",
    "human",
    "human_state",
    "text",
)


def audit_csv_rows(report: AuditReport) -> list[dict]:
    out = []
    for r in report.rows:
        row = {
            "id": r.candidate.pk,
            "contract": r.contract,
            "category": r.category,
            "grounding": f"{r.candidate.grounding:.6f}",
            "both_yes": int(r.both_yes),
            "human": (r.human.value or "") if r.human else "",
            "human_state": r.human.state if r.human else "",
            "text": r.candidate.text,
        }
        for slot in ("a", "b"):
            v = r.verdicts.get(slot)
            row[f"judge_{slot}"] = "" if v is None else ("yes" if v.verdict else "no")
            row[f"judge_{slot}_reason"] = "" if v is None else v.reason
            row[f"judge_{slot}_score"] = "" if v is None or v.score is None else f"{v.score:.6f}"
        out.append(row)
    return out

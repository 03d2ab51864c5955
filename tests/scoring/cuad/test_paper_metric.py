"""CUAD's own metric equals a plain copy of evaluate.py's logic on perturbed test sets built from the real CUAD."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.cuad.paper_metric import THRESHOLDS, Question, is_match, jaccard, paper_metric, question_counts
from tests.scoring.cuad import evaluate_reference as reference


def _questions(gold, preds) -> list[Question]:
    out = []
    for qid, answers in gold.items():
        contract, category = qid.rsplit("__", 1)
        predictions = tuple((p["text"], p["probability"]) for p in preds[qid])
        out.append(Question(contract, category, tuple(answers), predictions))
    return out


@pytest.mark.parametrize(("seed", "coarse", "gentle"), [(1, False, False), (2, True, True)])
def test_aupr_and_precision_at_recall_equal_evaluate_py_per_category_and_overall(data_dir, seed, coarse, gentle):
    gold, preds, _, categories = reference.perturbed_set(data_dir / "cuad" / "CUAD_v1.json", seed=seed, coarse=coarse,
                                                         gentle=gentle)
    result = paper_metric(_questions(gold, preds), replicates=20)
    thresholded = reference.thresholded_preds(preds)
    theirs = reference.evaluate(preds, gold, thresholded=thresholded)
    ours = result.overall
    assert ours.aupr.estimate == pytest.approx(theirs["aupr"], abs=1e-9)
    assert ours.precision_at_80_recall.estimate == pytest.approx(theirs["prec_at_80_recall"], abs=1e-9)
    assert ours.precision_at_90_recall.estimate == pytest.approx(theirs["prec_at_90_recall"], abs=1e-9)
    assert 0.2 < theirs["aupr"] < 0.95  # a perturbed run, neither perfect nor empty
    if gentle:  # recall passes 90%: precision at 80% and 90% recall are real figures, not evaluate.py's 0
        assert theirs["prec_at_80_recall"] > 0.5 and theirs["prec_at_90_recall"] > 0.5
    for category in categories:
        theirs = reference.evaluate(preds, gold, category=category, thresholded=thresholded)
        figures = result.per_category[category]
        assert figures.aupr.estimate == pytest.approx(theirs["aupr"], abs=1e-9), category
        assert figures.precision_at_80_recall.estimate == pytest.approx(theirs["prec_at_80_recall"], abs=1e-9)
        assert figures.precision_at_90_recall.estimate == pytest.approx(theirs["prec_at_90_recall"], abs=1e-9)


def test_the_word_rules_are_evaluate_pys():
    cases = [("The Seller, Inc.", "the seller inc"), ("a/b  c", "a b c"), ("Term: 5 years", "term 5 months"),
             ("", "x"), ("x", "")]
    for answer, prediction in cases:
        assert jaccard(answer, prediction) == reference.get_jaccard(answer, prediction)
    assert is_match("Acme", "Acme Corp., a Delaware corporation with offices", parties=True)
    assert not is_match("Acme", "Acme Corp., a Delaware corporation with offices", parties=False)


def test_one_prediction_may_satisfy_several_answers_and_a_repeated_text_keeps_its_last_probability():
    question = Question("c", "Governing Law", ("laws of Nevada", "laws of Nevada"),
                        (("the laws of Nevada", 0.9), ("the laws of Nevada", 0.3), ("", 0.99)))
    counts = question_counts(question)
    at = {round(float(t), 3): row for t, row in zip(THRESHOLDS, counts, strict=True)}
    assert at[0.5].tolist() == [0, 0, 2]  # 0.3 is the probability kept
    assert at[0.2].tolist() == [2, 0, 0]


def test_the_intervals_resample_contracts_and_hold_the_estimate():
    rng = np.random.default_rng(0)
    questions = [
        Question(f"c{c}", cat, ("alpha beta gamma",), (("alpha beta gamma", float(rng.random())),
                                                        ("noise words here", float(rng.random()))))
        for c in range(30) for cat in ("A", "B")
    ]
    result = paper_metric(questions, replicates=300, seed=3)
    for figures in (result.overall, *result.per_category.values()):
        for iv in (figures.aupr, figures.precision_at_80_recall, figures.precision_at_90_recall):
            assert iv.low <= iv.high
    assert result.overall.aupr.low < result.overall.aupr.estimate < result.overall.aupr.high
    assert result.contracts == 30 and result.as_dict()["per_category"].keys() == {"A", "B"}

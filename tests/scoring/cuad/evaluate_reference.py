# ruff: noqa: SIM201, SIM118, RUF005  (kept as evaluate.py writes it)
"""A copy of the logic of CUAD's ``evaluate.py`` (github.com/TheAtticusProject/cuad), kept as plain as it is there.

It is the reference the product's ``scoring.cuad.paper_metric`` is checked against, so it is written from
evaluate.py's code and documentation line by line (same loops, same dict-keyed predictions, same numpy
threshold sweep, ``sklearn.metrics.auc``), not from our module. Question ids are ``"<contract>__<category>"``
as in CUAD's SQuAD-style file, and categories are selected by ``category in key`` as evaluate.py does.

Also here: the perturbed test sets built from the real CUAD file (gold answers with perturbations and random
confidences), shared by the scoring test and the grade_cuad test.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from tests.references import auc

IOU_THRESH = 0.5


def get_preds(nbest_preds_dict, conf=None):
    results = {}
    for question_id in nbest_preds_dict:
        list_of_pred_dicts = nbest_preds_dict[question_id]
        preds = {}
        for pred_dict in list_of_pred_dicts:
            text = pred_dict["text"]
            prob = pred_dict["probability"]
            if not text == "":
                preds[text] = prob
        preds_list = [pred for pred in preds.keys() if preds[pred] > conf]
        results[question_id] = preds_list
    return results


@functools.cache  # a memo only: the sweep asks for the same pairs at every threshold
def get_jaccard(gt, pred):
    remove_tokens = [".", ",", ";", ":"]
    for token in remove_tokens:
        gt = gt.replace(token, "")
        pred = pred.replace(token, "")
    gt = gt.lower()
    pred = pred.lower()
    gt = gt.replace("/", " ")
    pred = pred.replace("/", " ")
    gt_words = set(gt.split(" "))
    pred_words = set(pred.split(" "))
    intersection = gt_words.intersection(pred_words)
    union = gt_words.union(pred_words)
    return len(intersection) / len(union)


def compute_precision_recall(gt_dict, preds_dict, category=None):
    tp, fp, fn = 0, 0, 0
    for key in gt_dict:
        if category and category not in key:
            continue
        substr_ok = "Parties" in key
        answers = gt_dict[key]
        preds = preds_dict[key]
        if len(answers) == 0:
            if len(preds) > 0:
                fp += len(preds)
        else:
            for ans in answers:
                assert len(ans) > 0
                match_found = False
                for pred in preds:
                    if substr_ok:
                        is_match = get_jaccard(ans, pred) >= IOU_THRESH or ans in pred
                    else:
                        is_match = get_jaccard(ans, pred) >= IOU_THRESH
                    if is_match:
                        match_found = True
                if match_found:
                    tp += 1
                else:
                    fn += 1
            for pred in preds:
                match_found = False
                for ans in answers:
                    if substr_ok:
                        is_match = get_jaccard(ans, pred) >= IOU_THRESH or ans in pred
                    else:
                        is_match = get_jaccard(ans, pred) >= IOU_THRESH
                    if is_match:
                        match_found = True
                if not match_found:
                    fp += 1
    precision = tp / (tp + fp) if tp + fp > 0 else np.nan
    recall = tp / (tp + fn) if tp + fn > 0 else np.nan
    return precision, recall


def process_precisions(precision):
    precision_best = precision[::-1]
    for i in range(1, len(precision_best)):
        precision_best[i] = max(precision_best[i - 1], precision_best[i])
    return precision_best[::-1]


def get_prec_at_recall(precisions, recalls, confs, recall_thresh=0.9):
    processed_precisions = process_precisions(precisions)
    prec_at_recall = 0
    for prec, recall, _conf in zip(processed_precisions, recalls, confs, strict=False):
        if recall >= recall_thresh:
            prec_at_recall = prec
            break
    return prec_at_recall


def get_precisions_recalls(pred_dict, gt_dict, category=None, thresholded=None):
    precisions = [1]
    recalls = [0]
    confs = []
    for index, conf in enumerate(list(np.arange(0.99, 0, -0.01)) + [0.001, 0]):
        # ``thresholded``: get_preds at each conf, computed once for every category (it does not depend on it).
        conf_thresh_pred_dict = get_preds(pred_dict, conf) if thresholded is None else thresholded[index]
        prec, recall = compute_precision_recall(gt_dict, conf_thresh_pred_dict, category=category)
        precisions.append(prec)
        recalls.append(recall)
        confs.append(conf)
    return precisions, recalls, confs


def get_aupr(precisions, recalls):
    processed_precisions = process_precisions(precisions)
    aupr = auc(recalls, processed_precisions)
    if np.isnan(aupr):
        return 0
    return aupr


def thresholded_preds(pred_dict):
    return [get_preds(pred_dict, conf) for conf in list(np.arange(0.99, 0, -0.01)) + [0.001, 0]]


def evaluate(pred_dict, gt_dict, category=None, thresholded=None) -> dict[str, float]:
    """What evaluate.py's ``get_results`` computes (per category when given, as its functions allow)."""
    precisions, recalls, confs = get_precisions_recalls(pred_dict, gt_dict, category=category,
                                                        thresholded=thresholded)
    return {
        "aupr": get_aupr(precisions, recalls),
        "prec_at_80_recall": get_prec_at_recall(precisions, recalls, confs, recall_thresh=0.8),
        "prec_at_90_recall": get_prec_at_recall(precisions, recalls, confs, recall_thresh=0.9),
    }


# --------------------------------------------------------------------------- perturbed test sets


def perturbed_set(cuad_path: Path, *, seed: int, contracts: int = 25, coarse: bool = False, gentle: bool = False):
    """(gold ``{qid: [answers]}``, predictions ``{qid: [{"text", "probability"}]}``, contract titles, categories).

    From ``contracts`` seeded CUAD contracts: each gold answer kept, cut, padded, replaced by text of another
    answer, or dropped; spurious predictions on questions with and without answers; duplicates; random
    confidences (``coarse``: rounded to hundredths, so many sit exactly on a threshold of the sweep).
    ``gentle``: fewer perturbations, so that recall passes 80% and 90% and precision at those recalls is not 0.
    """
    kept, cut, padded, replaced = (0.75, 0.85, 0.92, 0.95) if gentle else (0.45, 0.6, 0.7, 0.8)
    rng = np.random.default_rng(seed)
    data = json.loads(Path(cuad_path).read_text(encoding="utf-8"))["data"]
    chosen = sorted(rng.choice(len(data), size=contracts, replace=False).tolist())
    gold, preds, titles, categories = {}, {}, [], set()
    pool = [a["text"] for i in chosen for qa in data[i]["paragraphs"][0]["qas"] for a in qa["answers"]]

    def confidence(high: bool) -> float:
        value = float(rng.beta(5, 2) if high else rng.beta(2, 5))
        return round(value, 2) if coarse else value

    for i in chosen:
        contract = data[i]
        titles.append(contract["title"])
        for qa in contract["paragraphs"][0]["qas"]:
            qid = qa["id"]
            categories.add(qid.rsplit("__", 1)[1])
            answers = [a["text"] for a in qa["answers"]]
            gold[qid] = answers
            out = []
            for answer in answers:
                words = answer.split(" ")
                roll = rng.random()
                if roll < kept:
                    text = answer
                elif roll < cut:
                    text = " ".join(words[: max(1, int(len(words) * rng.uniform(0.3, 0.9)))])
                elif roll < padded:
                    text = answer + " and the other party thereto"
                elif roll < replaced:
                    text = str(rng.choice(pool))
                else:
                    continue  # missed
                out.append({"text": text, "probability": confidence(roll < padded)})
                if rng.random() < 0.05:
                    out.append({"text": text, "probability": confidence(False)})  # the same text again
            if rng.random() < 0.25:
                out.append({"text": str(rng.choice(pool)), "probability": confidence(False)})
            if rng.random() < 0.02:
                out.append({"text": "", "probability": confidence(True)})  # not a prediction
            preds[qid] = out
    return gold, preds, titles, sorted(categories)

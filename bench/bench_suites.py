"""Suites: a 1,000-case behavioural test suite through our batch path vs a per-case pipeline loop.

Ours: `core.suites.runner.run_suite` (every distinct input scored once, through the Evaluate
predictor on the batch engine) and the MFT/INV/DIR judgement. Raw: what a notebook does (CheckList's
way): for each case, transformers' text-classification pipeline on the input (and its changed
form), one call per text, then the same judgement. Same model, same cases, timed alternately.
Ratio = ours / raw (below 1: ours is faster).
"""

from __future__ import annotations

from pathlib import Path

from common import MODELS, Row, bert_base, interleaved, sizes, topic_labels

SUITE = {"task": "classify", "tests": [
    {"name": "mft", "type": "MFT", "template": "the {team} won the {game} against {other} on {day}",
     "fill": {"team": ["team", "club", "side", "players", "squad"], "game": ["match", "final", "cup", "league"],
              "other": ["rivals", "visitors", "champions", "leaders"], "day": ["monday", "friday", "sunday", "today",
                                                                               "tuesday"]},
     "expect": "sports"},
    {"name": "inv", "type": "INV", "template": "{name} booked a {thing} in {city} for the {when}",
     "fill": {"name": ["John", "Mary", "Anna", "Klaus", "Wei"], "thing": ["hotel", "flight", "tour", "room", "car"],
              "city": ["Paris", "Rome", "Lima"], "when": ["weekend", "summer"]},
     "perturb": "names", "seed": 0, "samples": 2},
    {"name": "dir", "type": "DIR", "label": "travel", "direction": "up",
     "template": "we stayed {n} nights at the {place} by the {thing}",
     "fill": {"n": [str(i) for i in range(2, 17)], "place": ["hotel", "resort", "lodge", "inn", "cabin"],
              "thing": ["sea", "lake", "river", "beach"]},
     "perturb": "neutral", "seed": 0, "samples": 1},
]}


def rows() -> list[Row]:
    out = _rows("", MODELS / "categorium-bert-tiny-topics-en", 3) if "small" in sizes() else []
    if "base" in sizes():
        out += _rows("bert-base-sized ", bert_base("SequenceClassification", topic_labels()), 1)
    return out


def _rows(size: str, folder: Path, repeats: int) -> list[Row]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.suites.runner import run_suite
    from bertstudio.core.suites.suite import parse_suite

    suite = parse_suite(SUITE)
    loaded = load_model(LoadRequest(str(folder), "classification"))
    pipe = pipeline("text-classification", model=AutoModelForSequenceClassification.from_pretrained(folder).eval(),
                    tokenizer=AutoTokenizer.from_pretrained(folder))

    def ours() -> int:
        return run_suite(loaded, suite, TaskControl()).failures

    def scores(text: str) -> dict[str, float]:
        return {s["label"]: s["score"] for s in pipe(text, top_k=None)}

    def raw() -> int:
        failures = 0
        for test in suite.tests:
            for case in test.cases:
                before = scores(case.original[0])
                top = max(before, key=before.__getitem__)
                if test.type == "MFT":
                    failures += top != case.expect
                    continue
                assert case.perturbed is not None
                after = scores(case.perturbed[0])
                if test.type == "INV":
                    failures += top != max(after, key=after.__getitem__)
                else:
                    failures += after[str(test.label)] - before[str(test.label)] < -test.tolerance
        return failures

    assert ours() == raw(), "the batch path and the per-case loop disagree on the failures"
    a, b = interleaved(ours, raw, repeats)
    return [Row(f"suite {size}{suite.cases:,} cases", a, b,
                f"run_suite vs per-case pipeline loop ({suite.cases / a:,.0f} vs {suite.cases / b:,.0f} cases/s)")]

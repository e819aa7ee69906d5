"""Behavioural test suites (issue 31): failure counts equal a hand-written loop over transformers'
pipeline (MFT with templates expanded, INV pairs, DIR pairs) on tiny random classifiers and the real
topic classifier; suite validation names the test and the field; perturbations are seeded; the CLI's
JSON; failures become labelled rows in seeded train/measure halves, written beside the data."""

from __future__ import annotations

import csv
import itertools
import json
import random
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.builtin import built_in_suites
from bertstudio.core.suites.fix import (
    TRAIN,
    anchor_rows,
    failure_rows,
    fix_file,
    fix_rows,
    measured,
    split_cases,
    write_failures,
)
from bertstudio.core.suites.perturb import PERTURBATIONS, perturbed
from bertstudio.core.suites.runner import run_suite
from bertstudio.core.suites.suite import parse_suite, read_suite
from bertstudio.core.suites.templates import expand
from tests.conftest import run_cli

TINY_SUITE = {
    "task": "classify",
    "tests": [
        {"name": "mft template", "type": "MFT", "template": "the {animal} {verb} on the {thing}",
         "fill": {"animal": ["cat", "dog", "man", "woman"], "verb": ["sat", "ran", "was"],
                  "thing": ["mat", "house", "tree", "car"]}, "expect": "positive"},
        {"name": "mft inputs", "type": "MFT", "inputs": ["good day", "bad night", "a new book"], "expect": "negative"},
        {"name": "inv pairs", "type": "INV", "pairs": [
            ["the cat sat on the mat", "the dog sat on the mat"], ["a good film", "a bad film"],
            ["paris is the capital of france", "berlin is the capital of germany"],
            ["john lives in paris", "mary lives in rome"], ["big house", "small house"],
            ["the old man ran fast", "the new man ran slow"]]},
        {"name": "inv perturbed", "type": "INV", "template": "{who} works in {where} with the {thing}",
         "fill": {"who": ["John", "Mary", "Anna"], "where": ["Paris", "Berlin", "Rome"],
                  "thing": ["cat", "dog", "car"]},
         "perturb": "names", "seed": 3, "samples": 2},
        {"name": "dir up", "type": "DIR", "label": "positive", "direction": "up", "pairs": [
            ["the cat", "the good cat"], ["a day", "a good day"], ["the film", "the new film"],
            ["music", "good music"], ["the story", "a bad story"], ["the game", "the big game"]]},
        {"name": "dir down", "type": "DIR", "label": "positive", "direction": "down", "tolerance": 0.001, "pairs": [
            ["the cat", "the bad cat"], ["a day", "a bad day"], ["the film", "the old film"], ["water", "cold water"]]},
    ],
}


def _pipeline(folder: Path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    return pipeline("text-classification", model=model, tokenizer=AutoTokenizer.from_pretrained(folder))


def _reference_failures(folder: Path, suite: dict) -> dict[str, int]:
    """The suite judged by hand: every text through transformers' pipeline one at a time."""
    pipe = _pipeline(folder)

    def scores(text: str) -> dict[str, float]:
        return {s["label"]: s["score"] for s in pipe(text, top_k=None)}

    def top(text: str) -> str:
        found = scores(text)
        return max(found, key=found.__getitem__)

    failures = {}
    for test in suite["tests"]:
        if "template" in test:
            names = list(test["fill"])
            texts = [test["template"].format(**dict(zip(names, words, strict=True)))
                     for words in itertools.product(*(test["fill"][n] for n in names))]
        else:
            texts = test.get("inputs", [])
        if test["type"] == "MFT":
            failures[test["name"]] = sum(top(t) != test["expect"] for t in texts)
            continue
        pairs = test.get("pairs", [])
        if "perturb" in test:  # the pairs the suite makes, read back from its file form (one rng per test)
            rng = random.Random(f"{test['seed']}:{test['perturb']}")
            pairs = [(t, p) for t in texts for p in perturbed(test["perturb"], t, rng, test["samples"])]
        if test["type"] == "INV":
            failures[test["name"]] = sum(top(a) != top(b) for a, b in pairs)
        else:
            sign = 1 if test["direction"] == "up" else -1
            tolerance = test.get("tolerance", 0)
            failures[test["name"]] = sum(
                sign * (scores(b)[test["label"]] - scores(a)[test["label"]]) < -tolerance for a, b in pairs)
    return failures


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_failures_equal_a_pipeline_loop_on_tiny_classifiers(checkpoint_factory, arch: str) -> None:
    folder = checkpoint_factory(arch, "SequenceClassification")
    suite = parse_suite(TINY_SUITE)
    result = run_suite(load_model(LoadRequest(str(folder), "classification")), suite, TaskControl())
    expected = _reference_failures(folder, TINY_SUITE)
    assert {t.name: t.failures for t in result.tests} == expected
    assert [t.cases for t in result.tests] == [48, 3, 6, len(suite.tests[3].cases), 6, 4]
    assert 0 < sum(expected.values()) < result.cases  # a random head passes some cases and fails others


def test_failures_equal_a_pipeline_loop_on_the_topic_classifier(real_models) -> None:
    folder = real_models["categorium-bert-tiny-topics-en"]
    suite_data = {"task": "classify", "tests": [
        {"name": "sports", "type": "MFT", "template": "The {team} won the {game} {when}.",
         "fill": {"team": ["team", "club", "players"], "game": ["match", "final", "league"],
                  "when": ["today", "again"]},
         "expect": "sports"},
        {"name": "food", "type": "MFT",
         "inputs": ["I baked bread with flour and butter.", "This pasta recipe uses garlic."],
         "expect": "food"},
        {"name": "typos", "type": "INV", "template": "We booked a {thing} for our trip to {place}.",
         "fill": {"thing": ["hotel", "flight", "tour"], "place": ["Paris", "Tokyo", "Lima"]},
         "perturb": "typos", "seed": 0, "samples": 3},
        {"name": "travel up", "type": "DIR", "label": "travel", "direction": "up", "pairs": [
            ["We spent a week there.", "We spent a week there on vacation at a beach resort."],
            ["The price went up.", "The price of the flight and hotel went up."]]},
    ]}
    result = run_suite(load_model(LoadRequest(str(folder), "classification")), parse_suite(suite_data), TaskControl())
    assert {t.name: t.failures for t in result.tests} == _reference_failures(folder, suite_data)


@pytest.mark.parametrize(("change", "test", "field"), [
    ({"type": "XYZ"}, "test 't'", "type"),
    ({"expect": None}, "test 't'", "expect"),
    ({"template": "the {cat} sat", "fill": {"dog": ["x"]}}, "test 't'", "template"),
    ({"inputs": []}, "test 't'", "inputs"),
    ({"colour": "red"}, "test 't'", "colour"),
    ({"type": "INV", "perturb": "shouting", "expect": None}, "test 't'", "perturb"),
    ({"type": "INV", "perturb": "typos", "samples": 0, "expect": None}, "test 't'", "samples"),
    ({"type": "DIR", "pairs": [["a", "b"]], "inputs": None, "expect": None, "label": "positive", "direction": "left"},
     "test 't'", "direction"),
    ({"type": "DIR", "pairs": [["a", "b"]], "inputs": None, "expect": None, "label": "positive", "tolerance": 2},
     "test 't'", "tolerance"),
    ({"type": "INV", "pairs": [["only one"]], "inputs": None, "expect": None}, "test 't'", "pairs"),
    ({"name": ""}, "test 1", "name"),
])
def test_a_malformed_suite_names_the_test_and_the_field(change: dict, test: str, field: str) -> None:
    raw = {"name": "t", "type": "MFT", "inputs": ["a text"], "expect": "positive", **change}
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(InputError) as error:
        parse_suite({"task": "classify", "tests": [raw]}, "s.json")
    assert f"{test}, field '{field}'" in error.value.message
    assert error.value.message.startswith("s.json: ")


def test_suite_level_errors() -> None:
    with pytest.raises(InputError, match="field 'task'"):
        parse_suite({"task": "summarise", "tests": [{}]})
    with pytest.raises(InputError, match="'tests'"):
        parse_suite({"task": "classify", "tests": []})
    with pytest.raises(InputError, match="two tests are named 'a'"):
        parse_suite({"task": "classify", "tests": [{"name": "a", "type": "MFT", "inputs": ["x"], "expect": "y"}] * 2})


def test_templates_fill_every_combination() -> None:
    rows = expand(["{a} and {b}", "{b}!"], {"a": ["1", "2", "3"], "b": ["x", "y"]})
    assert rows == [("1 and x", "x!"), ("1 and y", "y!"), ("2 and x", "x!"), ("2 and y", "y!"),
                    ("3 and x", "x!"), ("3 and y", "y!")]
    suite = parse_suite({"task": "qa", "tests": [
        {"name": "q", "type": "MFT", "template": ["Where is {n}?", "{n} is in {c}."],
         "fill": {"n": ["Ann", "Bo"], "c": ["Oslo", "Rome"]}, "expect": "{c}"}]})
    assert [(c.original, c.expect) for c in suite.tests[0].cases][1] == (("Where is Ann?", "Ann is in Rome."), "Rome")


@pytest.mark.parametrize("name", sorted(PERTURBATIONS))
def test_perturbations_are_seeded_and_change_the_text(name: str) -> None:
    text = "John said it is not bad: the hotel in Paris cost 120 euros and the food was great."
    first = perturbed(name, text, random.Random("7"), 5)
    assert first == perturbed(name, text, random.Random("7"), 5)
    assert first and all(new != text for new in first) and len(set(first)) == len(first)
    suite = {"task": "classify", "tests": [{"name": "p", "type": "INV", "inputs": [text], "perturb": name,
                                            "seed": 7, "samples": 5}]}
    assert parse_suite(suite).tests[0].cases == parse_suite(json.loads(json.dumps(suite))).tests[0].cases


def test_names_and_locations_swap_within_their_kind() -> None:
    rng = random.Random(0)
    for _ in range(20):
        new = PERTURBATIONS["locations"]("We flew from Paris to Japan.", rng)
        assert new is not None and "Japan" in new or "Paris" in new
        assert new.count(" ") == 5
    assert PERTURBATIONS["names"]("Nobody is named here.", rng) is None


def test_the_starter_suites_read() -> None:
    found = built_in_suites()
    assert {"sentiment", "ner", "qa"} <= set(found)
    sentiment = read_suite(found["sentiment"])
    assert {t.type for t in sentiment.tests} == {"MFT", "INV", "DIR"}
    assert any("Negation" in t.name for t in sentiment.tests)
    assert read_suite(found["ner"]).task == "ner" and read_suite(found["qa"]).task == "qa"


def test_failures_become_rows_in_seeded_halves(checkpoint_factory, tmp_path: Path) -> None:
    folder = checkpoint_factory("bert", "SequenceClassification")
    suite = parse_suite(TINY_SUITE)
    result = run_suite(load_model(LoadRequest(str(folder), "classification")), suite, TaskControl())
    rows = failure_rows(result, seed=1)
    assert len(rows) == sum(t.failures for t in result.tests if t.type != "DIR")
    for test in result.tests:
        train, measure = split_cases(test.test, seed=1)
        assert train.isdisjoint(measure) and train | measure == set(range(test.cases))
        assert (train, measure) == split_cases(test.test, seed=1)
        for outcome in test.failing:
            if test.type == "DIR":
                continue
            row = next(r for r in rows if r.test == test.name and r.text == (
                outcome.case.original if test.type == "MFT" else outcome.case.perturbed)[0])
            assert row.label == (outcome.case.expect if test.type == "MFT" else outcome.value)
            assert (row.split == TRAIN) == (outcome.index in train)
    assert sum(t.cases for t in measured(result, 1)) == sum(len(split_cases(t.test, 1)[1]) for t in result.tests)

    # a fix replays, per failure, a passing MFT case of the train halves (each once): its contrast
    failures = [r for r in rows if r.split == TRAIN]
    anchors = anchor_rows(result, failures, seed=1)
    assert fix_rows(result, seed=1) == failures + anchors and anchors == anchor_rows(result, failures, seed=1)
    passing = {(t.name, o.case.original[0]): o.case.expect for t in result.tests if t.type == "MFT"
               for o in t.outcomes if o.passed and o.index in split_cases(t.test, 1)[0]}
    assert len(anchors) == min(len(failures), len(passing)) > 0
    assert len({(a.test, a.text) for a in anchors}) == len(anchors)
    assert all(passing[(a.test, a.text)] == a.label and a.kind == "anchor" for a in anchors)

    data = tmp_path / "train.csv"
    data.write_text("text,label\nthe cat,positive\nthe dog,negative\n", encoding="utf-8")
    before = data.read_bytes()
    path, added = fix_file(data, rows)
    assert path.parent == tmp_path and path != data and data.read_bytes() == before
    with path.open(encoding="utf-8") as handle:
        written = list(csv.DictReader(handle))
    assert added == sum(r.split == TRAIN for r in rows) and len(written) == 2 + added
    assert fix_file(data, rows)[0] != path  # a second fix never overwrites the first
    out = write_failures(rows, tmp_path / "failures.csv")
    with out.open(encoding="utf-8") as handle:
        assert [r["split"] for r in csv.DictReader(handle)] == [r.split for r in rows]


def test_an_anchor_is_the_passing_case_most_like_the_failure() -> None:
    """'The phone was not bad.' -> positive is replayed beside 'The phone was not good.' -> negative,
    not beside an unrelated passing case."""
    from bertstudio.core.suites.fix import TrainingRow
    from bertstudio.core.suites.runner import CaseOutcome, SuiteResult, TestResult

    suite = parse_suite({"task": "classify", "tests": [
        {"name": "vocab", "type": "MFT", "inputs": ["I like this a lot", "What a lovely day"], "expect": "positive"},
        {"name": "not positive", "type": "MFT", "inputs": ["The phone was not good."], "expect": "negative"}]})
    tests = tuple(TestResult(t, tuple(CaseOutcome(n, c, str(c.expect), c.expect, True) for n, c in enumerate(t.cases)))
                  for t in suite.tests)
    result = SuiteResult(suite, "m", tests)
    failure = TrainingRow("The phone was not bad.", None, "positive", "not negative", "MFT", TRAIN)
    assert all(split_cases(t.test, 0)[0] == {0, 1}.intersection(range(t.cases)) or t.cases == 2 for t in tests)
    assert [a.text for a in anchor_rows(result, [failure], 0)] == ["The phone was not good."]


def test_cli_json_shape_compare_and_a_malformed_suite(checkpoint_factory, capfd, tmp_path: Path) -> None:
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps(TINY_SUITE), encoding="utf-8")
    a = checkpoint_factory("bert", "SequenceClassification")
    b = checkpoint_factory("distilbert", "SequenceClassification")
    done = run_cli(capfd, "check", "--model", str(a), "--suite", str(suite), "--compare", str(b), "--json",
                   "--failures", str(tmp_path / "f.csv"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [t["name"] for t in data["tests"]] == [t["name"] for t in TINY_SUITE["tests"]]
    for test in data["tests"] + data["compare"]["tests"]:
        assert set(test) >= {"name", "type", "cases", "failures", "failure_rate", "examples"}
        assert test["failure_rate"] == pytest.approx(test["failures"] / test["cases"])
        assert len(test["examples"]) == min(3, test["failures"])
    assert [d["name"] for d in data["compare"]["differences"]] == [t["name"] for t in TINY_SUITE["tests"]]
    assert (tmp_path / "f.csv").is_file()

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"task": "classify", "tests": [{"name": "neg", "type": "MFT", "inputs": ["x"]}]}))
    done = run_cli(capfd, "check", "--model", str(a), "--suite", str(bad))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "test 'neg', field 'expect'" in done.stderr and done.stdout == ""


OTHER_SUITES = {
    "nsp": {"task": "nsp", "tests": [
        {"name": "mft", "type": "MFT", "template": ["the {a} sat on the mat", "{b} ran fast"],
         "fill": {"a": ["cat", "dog", "man"], "b": ["it", "she", "the car"]}, "expect": "IsNext"},
        {"name": "inv", "type": "INV", "template": ["{who} lives in paris", "{who} works in a school"],
         "fill": {"who": ["John", "Mary", "Anna"]}, "perturb": "typos", "on": "second", "seed": 0, "samples": 2},
        {"name": "dir", "type": "DIR", "label": "IsNext", "direction": "up",
         "pairs": [[["the cat sat", "a dog ran"], ["the cat sat", "the cat ran"]]]}]},
    "multiple-choice": {"task": "choice", "tests": [
        {"name": "mft", "type": "MFT", "template": ["the {a} sat on the", "mat", "{b}"],
         "fill": {"a": ["cat", "dog"], "b": ["river", "tree", "car"]}, "expect": 0},
        {"name": "inv", "type": "INV",
         "inputs": [["John lives in", "paris", "rome"], ["Mary works at", "home", "school"]],
         "perturb": "names", "seed": 0, "samples": 2}]},
}


def _single(task: str, loaded, case: tuple[str, ...]):  # noqa: ANN001, ANN202
    """One case through the task's own single-input function (not the batch path suites use)."""
    if task == "nsp":
        from bertstudio.core.tasks.nsp import predict

        return "IsNext" if predict(loaded, case[0], case[1]).is_next >= 0.5 else "NotNext"
    if task == "multiple-choice":
        from bertstudio.core.tasks.multiple_choice import predict as choose

        return choose(loaded, case[0], list(case[1:])).best.index
    if task == "qa":
        from bertstudio.core.tasks.qa import QAOptions, answer
        from bertstudio.core.tasks.qa.suite import normal_answer

        best = answer(loaded, case[0], case[1], QAOptions(allow_no_answer=False)).best
        return normal_answer(best.answer if best is not None else "")
    from transformers import pipeline

    from bertstudio.core.tasks.ner.evaluate import words_to_tags

    pipe = pipeline("token-classification", model=loaded.model, tokenizer=loaded.tokenizer)
    return words_to_tags(case[0].split(), pipe(case[0], aggregation_strategy="first"))


@pytest.mark.parametrize(("task", "head"), [("nsp", "NextSentencePrediction"), ("multiple-choice", "MultipleChoice"),
                                            ("ner", "TokenClassification"), ("qa", "QuestionAnswering")])
def test_other_tasks_mft_and_inv_equal_their_single_input_functions(checkpoint_factory, task: str, head: str) -> None:
    """NER and QA run their starter suites; NSP and multiple choice small suites of their own."""
    from bertstudio.core.suites.tasks import adapter, meets
    from bertstudio.core.tasks.ner.evaluate import entities_text

    suite = read_suite(built_in_suites()[task]) if task in ("ner", "qa") else parse_suite(OTHER_SUITES[task])
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", head)), task))
    result = run_suite(loaded, suite, TaskControl())
    for test in result.tests:
        expected = 0
        for case in test.test.cases:
            before = _single(task, loaded, case.original)
            if test.type == "MFT":
                shown = entities_text(case.original[0].split(), before) if task == "ner" else ""
                expected += not meets(adapter(task), before, shown, case.expect)
            elif test.type == "INV":
                expected += before != _single(task, loaded, case.perturbed)
        if test.type != "DIR":
            assert test.failures == expected, test.name
    assert result.cases == suite.cases

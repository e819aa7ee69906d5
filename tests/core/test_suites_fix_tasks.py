"""Fix it beyond classification (issue 31): NER, QA and multiple-choice failures become rows in
each task's training format (MFT: the expected answer; INV: the changed input with the original's
prediction; DIR never), the new file beside the data reads back through core/training's own
reader as the user's rows plus the training half's, and `check --failures` writes that format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.fix import TRAIN, split_cases
from bertstudio.core.suites.fix_tasks import task_fix_file, task_rows, train_task, write_fix
from bertstudio.core.suites.runner import run_suite
from bertstudio.core.suites.suite import parse_suite
from tests.conftest import run_cli

SUITES = {
    "ner": {"task": "ner", "tests": [
        {"name": "mft", "type": "MFT", "template": "{who} lives here", "fill": {"who": ["John", "Mary", "Anna", "Tom"]},
         "expect": ["B-PER", "O", "O"]},
        {"name": "inv", "type": "INV", "inputs": ["John lives in Paris", "Mary works in Rome", "Anna met Tom"],
         "perturb": "names", "seed": 0, "samples": 2}]},
    "qa": {"task": "qa", "tests": [
        {"name": "mft", "type": "MFT", "template": ["Where does {who} live?", "{who} lives in {city}."],
         "fill": {"who": ["John", "Mary"], "city": ["Paris", "Rome"]}, "expect": "{city}"},
        {"name": "inv", "type": "INV", "template": ["Where does {who} live?", "{who} lives in {city} with a cat."],
         "fill": {"who": ["John", "Mary"], "city": ["Paris", "Rome"]}, "perturb": "typos", "on": "question",
         "seed": 0, "samples": 2}]},
    "multiple-choice": {"task": "choice", "tests": [
        {"name": "mft", "type": "MFT", "template": ["the {a} sat on the", "mat", "{b}"],
         "fill": {"a": ["cat", "dog"], "b": ["river", "tree", "car"]}, "expect": 0},
        {"name": "inv", "type": "INV",
         "inputs": [["John lives in", "paris", "rome"], ["Mary works at", "home", "school"]],
         "perturb": "names", "seed": 0, "samples": 2}]},
}
HEADS = {"ner": "TokenClassification", "qa": "QuestionAnswering", "multiple-choice": "MultipleChoice"}
USER_DATA = {
    "ner": ("train.conll", "Klaus B-PER\nlives O\n\nin O\nVienna B-LOC\n"),
    "qa": ("train.json", json.dumps({"data": [{"title": "t", "paragraphs": [{"context": "Ada lives in Oslo.", "qas": [
        {"id": "1", "question": "Where does Ada live?", "answers": [{"text": "Oslo", "answer_start": 13}]}]}]}]})),
    "multiple-choice": ("train.csv", "prompt,choice0,choice1,label\nthe sky is,blue,green,0\n"),
}


def _read_back(task: str, path: Path) -> list[tuple]:
    """The file as core/training reads it, one comparable tuple per example."""
    if task == "ner":
        from bertstudio.core.tasks.ner.conll import read_conll

        return [(" ".join(s.tokens), s.tags) for s in read_conll(path)]
    if task == "qa":
        from bertstudio.core.tasks.qa.train_read import read_qa

        return [(x.question, x.context, x.answers[0], x.start) for x in read_qa(path)]
    from bertstudio.core.tasks.multiple_choice.train import read_choices

    return [(x.inputs[0], *x.inputs[1], x.gold) for x in read_choices(str(path))]


def _expected(task: str, parts: tuple[str, ...], answer) -> tuple:  # noqa: ANN001
    if task == "ner":
        return (parts[0], tuple(answer))
    if task == "qa":
        start = parts[1].find(answer)
        assert start >= 0
        return (parts[0], parts[1], answer, start)
    return (*parts, int(answer))


@pytest.mark.parametrize("task", ["ner", "qa", "multiple-choice"])
def test_failures_become_rows_in_the_tasks_training_format(checkpoint_factory, tmp_path: Path, task: str) -> None:
    suite = parse_suite(SUITES[task])
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", HEADS[task])), task))
    result = run_suite(loaded, suite, TaskControl())
    rows, skipped = task_rows(result)
    # every failing MFT/INV case is a row or counted as left out (QA: an answer its context lacks)
    assert len(rows) + skipped == sum(t.failures for t in result.tests) > 0
    want, train_want, halves = [], [], []
    for test in result.tests:
        train, _ = split_cases(test.test)
        for o in test.failing:
            if test.type == "MFT":
                parts, answer = o.case.original, o.case.expect
            else:
                parts, answer = o.case.perturbed, o.value
            if task == "qa" and (not answer or parts[1].find(answer) < 0):
                continue
            want.append(_expected(task, parts, answer))
            halves.append(o.index in train)
            if o.index in train:
                train_want.append(want[-1])
    got = [_expected(task, r.parts, r.answer[0] if task == "qa" else r.answer) for r in rows]
    assert got == want
    assert [r.split == TRAIN for r in rows] == halves
    if task != "qa":
        assert skipped == 0

    name, text = USER_DATA[task]
    data = tmp_path / name
    data.write_text(text, encoding="utf-8")
    before = data.read_bytes()
    assert train_task(suite.task)
    if not train_want:
        pytest.skip("no failure in the training halves of this tiny model")
    path, added = write_fix(result, data)
    assert path.parent == tmp_path and path != data and data.read_bytes() == before
    assert added == len(train_want)
    assert _read_back(task, path) == _read_back(task, data) + train_want
    again, _ = task_fix_file(suite.task, data, rows)
    assert again != path  # never over a file already there


def test_check_failures_writes_conll_for_ner(checkpoint_factory, capfd, tmp_path: Path) -> None:  # noqa: ANN001
    from bertstudio.core.tasks.ner.conll import read_conll

    suite = tmp_path / "ner.json"
    suite.write_text(json.dumps(SUITES["ner"]), encoding="utf-8")
    model = str(checkpoint_factory("bert", "TokenClassification"))
    out = tmp_path / "failures.conll"
    done = run_cli(capfd, "check", "--model", model, "--suite", str(suite), "--failures", str(out))
    assert done.returncode == 0, done.stderr
    result = run_suite(load_model(LoadRequest(model, "ner")), parse_suite(SUITES["ner"]), TaskControl())
    rows, _ = task_rows(result)
    for path, half in ((out, "train"), (tmp_path / "failures.measure.conll", "measure")):  # the halves kept apart
        assert [(" ".join(s.tokens), s.tags) for s in read_conll(path)] == [
            (r.parts[0], tuple(r.answer)) for r in rows if r.split == half]

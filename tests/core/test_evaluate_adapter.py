"""Evaluate reads its tasks from the specs: a spec's EvaluateAdapter is the only place a task's reader,
predictor, metrics and rows are named (issue 18)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate import adapters
from bertstudio.core.evaluate.evaluation import evaluate
from bertstudio.core.evaluate.predict import Prediction
from bertstudio.core.evaluate.readers import Dataset, Example, read_dataset
from bertstudio.core.tasks import spec as spec_module
from bertstudio.core.tasks.spec import EvaluateAdapter, all_specs

ROOT = Path(__file__).resolve().parents[2]
# Where Evaluate's code lives: none of it may switch on (or even name) a task key.
EVALUATE_CODE = [*sorted((ROOT / "bertstudio/core/evaluate").glob("*.py")), ROOT / "bertstudio/cli/evaluate.py",
                 ROOT / "bertstudio/ui/tabs/evaluate_tab.py", ROOT / "bertstudio/ui/widgets/eval_results.py",
                 ROOT / "bertstudio/ui/widgets/eval_tables.py", ROOT / "bertstudio/ui/widgets/projector_plot.py"]


def _evaluate_parser() -> argparse.ArgumentParser:
    from bertstudio.cli import evaluate as cli

    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    return parser


def _task_choices(parser: argparse.ArgumentParser) -> list[str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    evaluate_parser = sub.choices["evaluate"]
    return list(next(a for a in evaluate_parser._actions if a.dest == "task").choices)  # noqa: SLF001


def test_cli_task_choices_are_the_specs_with_an_evaluate_adapter() -> None:
    expected = [spec.cli_name for spec in all_specs().values() if spec.evaluate is not None]
    assert _task_choices(_evaluate_parser()) == expected
    # every name accepted before the specs carried the adapter is still accepted
    assert set(expected) >= {"classify", "ner", "qa", "fill-mask", "nsp", "choice"}


def test_every_evaluable_spec_names_functions_that_exist() -> None:
    """Every step an Evaluate adapter names is a function its module holds under that name (a plain
    import, so a grep for it finds the spec)."""
    import importlib

    for key, spec in adapters.evaluable().items():
        adapter = spec.evaluate
        assert adapter is not None and adapter.picker and adapter.file_filter, key
        for name in ("read", "predict", "metrics", "inputs_of", "pair_of", "prepare", "correct", "shown_gold",
                     "label_of"):
            function = getattr(adapter, name)
            if function is None:
                continue
            module = importlib.import_module(function.__module__)
            assert getattr(module, function.__name__) is function, (key, name, function)


def test_unknown_or_unevaluable_task_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("a\n", encoding="utf-8")
    for task in ("attention", "no-such-task"):
        with pytest.raises(InputError, match=f"does not support the task '{task}'") as caught:
            read_dataset(task, tmp_path / "x.txt")
        assert all(name in (caught.value.hint or "") for name in ("classify", "choice", "fill-mask"))


def test_a_pretrained_model_is_scored_as_its_training_says() -> None:
    from bertstudio.core.training.trainable import TRAINABLE

    assert adapters.evaluated_as("ner") == "ner"
    assert adapters.evaluated_as("pretraining") == TRAINABLE["pretraining"].open_in[0] == "fill-mask"


def _toy_read(path: Path, columns: Any, control: Any = None) -> Dataset:
    lines = path.read_text(encoding="utf-8").split()
    return Dataset("", str(path), tuple(Example(i + 1, w, w, w.upper()) for i, w in enumerate(lines)))


def _toy_predict(loaded: Any, examples: Any, control: Any, options: Any, shout: bool = False
                 ) -> tuple[list[Prediction], list[str]]:
    return [Prediction(x.inputs.upper() if shout else x.inputs, x.inputs, 1.0) for x in examples], []


def _toy_metrics(golds: Any, predictions: Any, labels: Any = ()) -> tuple[dict[str, float], dict, None]:
    return {"hits": float(sum(g == p for g, p in zip(golds, predictions, strict=True)))}, {}, None


def test_a_new_spec_is_evaluated_without_touching_core_evaluate(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """The proof that no switch is left: a task core/evaluate has never heard of reads, predicts,
    scores and slices through its adapter alone."""
    toy = EvaluateAdapter(
        picker="Toy", file_filter="Text (*.txt)", read=_toy_read, predict=_toy_predict, metrics=_toy_metrics,
        inputs_of=lambda example: ("toy input", example.inputs), pair_of=lambda example: (example.text, None),
        prepare=lambda loaded, dataset: (["A", "B"], ["prepared"], {"shout": True}),
        label_of=lambda example: example.text[0], per_label="toy")
    specs = dict(all_specs())
    specs["toy"] = replace(next(iter(specs.values())), key="toy", command="", evaluate=toy)
    monkeypatch.setattr(spec_module, "all_specs", lambda: specs)
    monkeypatch.setattr(adapters, "all_specs", lambda: specs)
    data = tmp_path / "words.txt"
    data.write_text("ab ac b\n", encoding="utf-8")
    dataset = read_dataset("toy", data)
    assert dataset.task == "toy" and len(dataset) == 3
    loaded = SimpleNamespace(info=SimpleNamespace(request=SimpleNamespace(source="toy-model")))
    result = evaluate(loaded, dataset)  # type: ignore[arg-type]
    assert result.metrics == {"hits": 3.0} and all(r.correct for r in result.rows)
    assert [n.text for n in result.notes] == ["prepared"] and result.per_label_name == "per_toy"
    assert {(s.by, s.value, s.n) for s in result.slices if s.by == "label"} == {("label", "a", 2), ("label", "b", 1)}
    assert result.adapter.inputs_of(dataset.examples[0]) == ("toy input", "ab")
    assert "toy" in _task_choices(_evaluate_parser())


def test_evaluate_code_names_no_task_key() -> None:
    keys = set(all_specs()) | {spec.cli_name for spec in all_specs().values()}
    alternatives = "|".join(re.escape(k) for k in sorted(keys))
    quoted = re.compile(rf"""["']({alternatives})["']""")
    found = []
    for path in EVALUATE_CODE:
        if path.stem in all_specs():  # a task's own evaluate module may name it
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if quoted.search(line) and "pick_column(" not in line:  # "choice" as the name of a column
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_reading_the_evaluable_specs_imports_neither_torch_nor_numpy() -> None:
    code = ("import sys\nfrom bertstudio.core.evaluate.adapters import evaluable\n"
            "assert len(evaluable()) >= 6\nprint(sorted(m for m in ('torch', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_a_checkpoint_names_the_task_it_was_trained_for(checkpoint_factory) -> None:  # noqa: ANN001
    """Issue 29 #2: Evaluate (tab and CLI) scores a checkpoint as what its head was trained for."""
    for head, task in (("SequenceClassification", "classification"), ("QuestionAnswering", "qa"),
                       ("TokenClassification", "ner"), ("MultipleChoice", "multiple-choice"),
                       ("MaskedLM", "fill-mask"), ("NextSentencePrediction", "nsp"), ("PreTraining", "fill-mask")):
        assert adapters.checkpoint_task(str(checkpoint_factory("bert", head))) == task, head
    assert adapters.checkpoint_task(str(checkpoint_factory("bert", "Model"))) is None  # a bare encoder says nothing
    assert adapters.trained_for(["DistilBertForQuestionAnswering"]) == "qa"
    assert adapters.checkpoint_task("some-org/a-hub-id") is None


def test_evaluate_without_task_scores_as_the_checkpoint_says(capfd, real_models, checkpoint_factory) -> None:  # noqa: ANN001
    from tests.conftest import run_cli

    done = run_cli(capfd, "evaluate", "--model", str(real_models["categorium-bert-tiny-topics-en"]),
                   "--data", str(ROOT / "tests/data/evaluate/topics.csv"), "--limit", "8", "--json")
    assert done.returncode == 0, done.stderr
    assert "accuracy" in __import__("json").loads(done.stdout)["metrics"]
    bare = run_cli(capfd, "evaluate", "--model", str(checkpoint_factory("bert", "Model")),
                   "--data", str(ROOT / "tests/data/evaluate/topics.csv"))
    assert bare.returncode == 1 and "Add --task" in bare.stderr and "Traceback" not in bare.stderr

"""Fine-tuning QA, multiple choice and regression: each trains through the one engine with the
logged LR equal to get_scheduler's, resumes on the same curve, saves a model its task loads,
reports its validation scores; bad rows are named by line; QA windows and spans are exact."""

from __future__ import annotations

import csv
import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.engine import plan, train
from bertstudio.core.training.events import TrainingEvent
from bertstudio.resources import resource_path

DATASETS = resource_path("datasets")
FILES = {"qa": ("qa_train.json", "qa_eval.json"), "choice": ("choice_train.csv", "choice_eval.csv"),
         "regression": ("sts_train.csv", "sts_eval.csv")}
SCORES = {"qa": {"eval_exact_match", "eval_f1"}, "choice": {"eval_accuracy"},
          "regression": {"eval_pearson", "eval_spearman"}}
OPENS = {"qa": ("qa",), "choice": ("multiple-choice",), "regression": ("classification",)}


def small_copy(task: str, name: str, folder: Path, rows: int) -> Path:
    """The first rows of a demo file (tiny runs tokenize little)."""
    source = DATASETS / name
    target = folder / name
    if name.endswith(".json"):
        document = json.loads(source.read_text(encoding="utf-8"))
        document["data"][0]["paragraphs"] = document["data"][0]["paragraphs"][:rows]
        target.write_text(json.dumps(document, indent=1), encoding="utf-8")
    else:
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        target.write_text("".join(lines[:rows + 1]), encoding="utf-8")
    return target


def task_config(task: str, folder: Path, model: Path, **changes: object) -> TrainConfig:
    train_name, eval_name = FILES[task]
    rows = (6, 2) if task == "qa" else (16, 6)  # a QA row is a paragraph of three questions
    config = TrainConfig(task=task, model=str(model), train_file=str(small_copy(task, train_name, folder, rows[0])),
                         eval_file=str(small_copy(task, eval_name, folder, rows[1])), output_dir=str(folder / "out"),
                         max_steps=8, warmup_steps=2, batch_size=4, learning_rate=1e-3, max_length=64, seed=0)
    return replace(config, **changes)  # type: ignore[arg-type]


def collect(stop_at: int = 0, stop: threading.Event | None = None) -> tuple[TaskControl, list[TrainingEvent]]:
    events: list[TrainingEvent] = []

    def on_event(event) -> None:  # noqa: ANN001
        if isinstance(event.payload, TrainingEvent):
            events.append(event.payload)
            if stop is not None and event.payload.kind == "step" and event.payload.step == stop_at:
                stop.set()

    return TaskControl(on_event), events


def reference_lrs(config: TrainConfig, total: int) -> list[float]:
    import torch
    from transformers import get_scheduler

    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=config.learning_rate)
    scheduler = get_scheduler(config.scheduler, optimizer, num_warmup_steps=config.warmup_steps,
                              num_training_steps=total)
    rates = []
    for _ in range(total):
        rates.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    return rates


@pytest.mark.parametrize("task", sorted(FILES))
def test_trains_on_get_schedulers_curve_resumes_on_it_and_opens_in_its_task(
        task: str, tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.models import LoadRequest, load_uncached

    config = task_config(task, tmp_path, checkpoint_factory("bert", "Model"), eval_steps=4)
    stop = threading.Event()
    control, first_events = collect(3, stop)
    first = train(config, control, stop_event=stop)
    assert first.stopped and 3 <= first.step < 8
    control, events = collect()
    result = train(replace(config, resume=True), control)
    logged = {e.step: e.learning_rate for e in first_events + events if e.kind == "step"}
    assert sorted(logged) == list(range(1, 9)) and not result.stopped
    for step, expected in enumerate(reference_lrs(config, 8), start=1):
        assert logged[step] == pytest.approx(expected, rel=1e-9, abs=1e-15), step
    assert SCORES[task] <= set(result.metrics) and "eval_loss" in result.metrics
    assert [e.metrics.keys() >= {k[5:] for k in SCORES[task]} for e in events if e.kind == "eval"] == [True]
    assert result.open_in == OPENS[task]
    loaded = load_uncached(LoadRequest(result.output_dir, OPENS[task][0]))
    assert loaded.info.head_report.complete
    if task == "regression":
        assert loaded.model.config.problem_type == "regression" and loaded.info.id2label == {0: "score"}


def test_regression_model_classifies_as_a_value(tmp_path: Path, checkpoint_factory, capsys) -> None:  # noqa: ANN001
    from bertstudio.cli import main

    config = task_config("regression", tmp_path, checkpoint_factory("bert", "Model"), max_steps=2)
    result = train(config)
    capsys.readouterr()
    assert main(["classify", "--model", result.output_dir, "The dog runs in the park."]) == 0
    assert "value (regression head)" in capsys.readouterr().out
    # and Evaluate scores it by correlation (scipy's, on the values it predicted), not as classes
    from scipy.stats import pearsonr, spearmanr

    evaluation = _evaluate(Path(result.output_dir), "classification", Path(config.eval_file or ""))
    golds = [float(g) for g in evaluation.golds]
    values = [p[0] for p in evaluation.predictions]
    assert evaluation.metrics["pearson"] == pytest.approx(pearsonr(golds, values)[0])
    assert evaluation.metrics["spearman"] == pytest.approx(spearmanr(golds, values)[0])
    assert evaluation.confusion is None and "accuracy" not in evaluation.metrics


def test_plan_counts_qa_windows_as_the_run_does(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    config = task_config("qa", tmp_path, checkpoint_factory("bert", "Model"), max_steps=0, epochs=1,
                         max_length=48, batch_size=4)
    info = plan(config)
    control, events = collect()
    train(replace(config, eval_file=None, eval_share=0.0), control)
    first = next(e for e in events if e.kind == "plan")
    assert info.train_examples == first.metrics["train_examples"] > 18  # 6 paragraphs of three questions, in windows
    assert info.total_steps == first.max_steps


def test_windows_map_answers_to_their_tokens_or_cls(checkpoint_factory) -> None:  # noqa: ANN001
    from transformers import AutoTokenizer

    from bertstudio.core.tasks.qa.train import encode_windows
    from bertstudio.core.tasks.qa.train_read import QAExample

    tokenizer = AutoTokenizer.from_pretrained(checkpoint_factory("bert", "Model"))
    context = " ".join(["the cat is here"] * 12) + " the answer is a red car . " + " ".join(["the dog"] * 10)
    rows = [QAExample(1, "what is it", context, ("red car",), context.index("red car")),
            QAExample(2, "what is not", context, (), -1)]
    features = encode_windows(tokenizer, rows, 32)
    assert len(features) > 4
    hits = 0
    for feature in features:
        start, end, offsets = feature["start_positions"], feature["end_positions"], feature["offset_mapping"]
        if start == feature["cls_index"]:
            assert end == start
            continue
        hits += 1
        assert feature["example_index"] == 0
        assert context[offsets[start][0]:offsets[end][1]] == "red car"
    assert hits >= 1 and all(f["start_positions"] == f["cls_index"] for f in features if f["example_index"] == 1)


def test_bad_rows_are_named_by_line(tmp_path: Path) -> None:
    from bertstudio.core.training.trainable import TRAINABLE

    qa_csv = tmp_path / "qa.csv"
    qa_csv.write_text("question,context,answer\nWho?,Alice went home.,Alice\nWhere?,Bob sat down.,Paris\n")
    squad = {"data": [{"paragraphs": [{"context": "Ann lives in Rome.", "qas": [
        {"question": "Where?", "answers": [{"text": "Rome", "answer_start": 13}]},
        {"question": "Who?", "answers": [{"text": "Bea", "answer_start": 0}]}]}]}]}
    qa_json = tmp_path / "qa.json"
    qa_json.write_text(json.dumps(squad, indent=1))
    choice = tmp_path / "choice.csv"
    choice.write_text("prompt,choice0,choice1,label\nPick,a,b,1\nPick,a,b,7\n")
    sts = tmp_path / "sts.csv"
    sts.write_text("sentence1,sentence2,score\na,b,1.5\nc,d,high\ne,f,nan\n")
    expected = {("qa", qa_csv): "line 3: the answer 'Paris' is not in the context",
                ("qa", qa_json): "line 1[0-9]: the answer 'Bea' is not in its context",
                ("choice", choice): "line 3: label '7' is not a choice index 0..1",
                ("regression", sts): "line 3: score 'high' is not a finite number; line 4"}
    for (task, path), message in expected.items():
        with pytest.raises(InputError, match=message):
            TRAINABLE[task].read(TrainConfig(task=task, train_file=str(path), model="m", output_dir="o"))


def test_choices_of_different_counts_are_padded_and_never_picked(checkpoint_factory) -> None:  # noqa: ANN001
    import numpy as np
    from transformers import AutoTokenizer

    from bertstudio.core.evaluate.readers import Example
    from bertstudio.core.tasks.multiple_choice.train import choice_accuracy
    from bertstudio.core.training.trainable import TRAINABLE

    tokenizer = AutoTokenizer.from_pretrained(checkpoint_factory("bert", "Model"))
    rows = [Example(2, "pick", ("the cat", ("a", "b")), 1), Example(3, "pick", ("the dog", ("a", "b", "c d")), 2)]
    task = TRAINABLE["choice"]
    features, _ = task.encode(tokenizer, rows, [], 32, False)
    batch = task.collator(tokenizer)(features)
    assert tuple(batch["input_ids"].shape[:2]) == (2, 3) and batch["labels"].tolist() == [1, 2]
    assert int(batch["attention_mask"][0, 2].sum()) == 0  # the padding choice is empty
    logits = np.array([[0.0, 1.0, 9.0], [0.0, 1.0, 2.0]])  # the padding choice scores highest: not counted

    class Pred:
        predictions, label_ids = logits, np.array([1, 2])

    assert choice_accuracy([2, 3])(Pred()) == {"accuracy": 1.0}


def test_regression_correlations_equal_scipy() -> None:
    from scipy.stats import pearsonr, spearmanr

    from bertstudio.core.tasks.classification.train_regression import correlations

    gold, predicted = [0.5, 1.0, 3.0, 4.5, 2.0], [0.7, 0.9, 2.0, 4.0, 2.5]
    assert correlations(gold, predicted) == pytest.approx(
        {"pearson": pearsonr(gold, predicted)[0], "spearman": spearmanr(gold, predicted)[0]})
    assert correlations([1.0, 1.0], [0.5, 0.7]) == {}


def test_demo_files_read_cleanly() -> None:
    from bertstudio.core.training.trainable import TRAINABLE

    for task, (train_name, eval_name) in FILES.items():
        assert TRAINABLE[task].demo_files == (train_name, eval_name)
        data = TRAINABLE[task].read(TrainConfig(task=task, train_file=str(DATASETS / train_name),
                                                eval_file=str(DATASETS / eval_name), model="m", output_dir="o"))
        assert len(data.train) >= 300 and len(data.eval) >= 60
    with (DATASETS / "sts_train.csv").open(encoding="utf-8") as handle:
        scores = [float(row["score"]) for row in csv.DictReader(handle)]
    assert min(scores) < 1.0 and max(scores) > 4.0


def _evaluate(folder: Path, task: str, data: Path):  # noqa: ANN202
    from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
    from bertstudio.core.models import LoadRequest

    return evaluate_job(LoadRequest(str(folder), task), EvalRequest(str(data)), TaskControl(), None)


def test_minilm_qa_trained_on_the_demo_data_answers_held_out_questions(real_models, tmp_path: Path) -> None:  # noqa: ANN001
    """Other names, cities and paragraph templates than training: EM measures reading, not memory."""
    from tests.fixtures.trained_tasks import held_out_qa, trained

    folder = trained("qa", real_models["all-minilm-l6-v2"])
    result = _evaluate(folder, "qa", held_out_qa(tmp_path))
    print(f"held-out QA: exact match {result.metrics['exact_match']:.3f}, F1 {result.metrics['f1']:.3f}")
    assert result.n == 60 and result.metrics["exact_match"] >= 0.6 and result.metrics["f1"] >= 0.7


def test_minilm_choice_trained_on_the_demo_data_beats_chance_on_held_out(real_models, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.fixtures.trained_tasks import held_out_choice, trained

    folder = trained("choice", real_models["all-minilm-l6-v2"])
    result = _evaluate(folder, "multiple-choice", held_out_choice(tmp_path))
    print(f"held-out multiple choice: accuracy {result.metrics['accuracy']:.3f} (chance 0.25)")
    assert result.n == 60 and result.metrics["accuracy"] >= 0.5

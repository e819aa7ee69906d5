"""The walkthrough's chains across tabs and restarts (scripts/walkthrough.py runs them).

Evaluate with two models and two tasks, then the first model reloaded (issue 29 #1-#3).

Train -> Evaluate in a restarted window (issue 29): a small model trained for real, handed to
Evaluate with its Evaluate… button; every view of the hand-off must name the trained folder and its
task. `handoff_problems` is the pure check (unit-tested on stand-ins, tests/ui/test_walkthrough_checks.py).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

TRAIN_TASK = "choice"  # a task other than the walkthrough's Evaluate models (classification, then QA)


def _same(a: Any, b: Any) -> bool:
    """Two model paths name the same folder (a trailing slash or a relative spelling aside)."""
    if not a or not b:
        return False
    return Path(str(a)).expanduser().resolve() == Path(str(b)).expanduser().resolve()


def wait_until(predicate: Any, timeout_s: float = 120.0, step_ms: int = 100) -> bool:
    """Run the event loop until `predicate()` holds (True) or the time is up (False)."""
    import screenshot

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        screenshot.settle(step_ms)
    return bool(predicate())


def wait_idle(timeout_s: float = 180.0) -> bool:
    """Until no job runs (warm-up, models folder scan, restored loads): a window closed while its
    jobs ran left them behind ("closing although these jobs have not ended")."""
    from bertstudio.workers.runner import TaskRunner

    return wait_until(lambda: not TaskRunner.any_busy(), timeout_s, 200)


def evaluate_chain(window: Any, inspector: Any, out: Path, mode: str) -> None:
    """Evaluate with two models and two tasks one after the other (issue 29 #1-#3), then the first
    model loaded again without a run: each time the figures' model and task must be the bar's, or
    the view must say Out of date (origin_problems, through inspector.check)."""
    import screenshot

    from bertstudio.resources import resource_path

    tab = window.task_tabs.get("evaluate")
    if tab is None:
        return
    window.tabs.setCurrentWidget(tab)
    runs = [(screenshot.fixture("minilm-reviews") or screenshot.fixture("minilm-sentiment"), "reviews_eval.csv",
             "classification"), (screenshot.fixture("qa-minilm"), "qa_eval.json", "qa")]
    for head, data, task in runs:
        inspector.where = f"{mode}/evaluate chain/{task}"
        if head is None:
            inspector.problem(f"no trained {task} head in the fixtures cache")
            continue
        tab.open_evaluation(str(head), str(resource_path("datasets", data)), task)
        screenshot.wait(tab.runner.finished, 300_000)
        screenshot.settle(200)
        shown = tab.read_state().result
        if shown is None or shown.model is None:
            inspector.problem(f"no evaluation of {head.name} on {data} is shown")
        elif (shown.model.source, shown.inputs) != (str(head), str(resource_path("datasets", data))):
            inspector.problem(f"the shown evaluation is of {shown.model.source} on {shown.inputs}, "
                              f"asked {head} on {data}")
        inspector.check()
        window.grab().save(str(out / f"{mode}-evaluate-chain-{task}.png"))
    first = runs[0][0]
    if first is not None:
        inspector.where = f"{mode}/evaluate chain/another model loaded"
        tab.model_bar.load(str(first))
        screenshot.wait(tab.model_bar.loaded)
        screenshot.settle(200)
        inspector.check()
        window.grab().save(str(out / f"{mode}-evaluate-chain-reloaded.png"))


def handoff_problems(train: Any, evaluate: Any, folder: str, task: str) -> list[str]:
    """What disagrees with the trained `folder` and its Evaluate `task` after Train's Evaluate…:
    the Evaluate tab's model field, its loaded model, its result's origin, the evaluation shown in
    its metrics, and the Train tab's own result (its origin, when the tab reports one, names the base
    model it was computed from, the folder it wrote and its task)."""
    found = []
    state = evaluate.read_state()
    if not _same(state.model, folder):
        found.append(f"evaluate: the model field says {state.model!r}, the trained model is {folder}")
    if not _same(state.loaded, folder):
        found.append(f"evaluate: the loaded model is {state.loaded or 'none'}, the trained model is {folder}")
    shown = state.result
    if shown is None or shown.model is None:
        found.append(f"evaluate: no evaluation is shown for {folder}")
    else:
        if not _same(shown.model.source, folder):
            found.append(f"evaluate: the result was computed from {shown.model.source}, not {folder}")
        if shown.model.task != task:
            found.append(f"evaluate: the result was computed for task {shown.model.task!r}, the model's is {task!r}")
    evaluation = getattr(evaluate, "evaluation", None)
    metrics = getattr(evaluation, "metrics", None) or {}
    if evaluation is None or not metrics:
        found.append("evaluate: no metrics are shown")
    else:
        if not _same(evaluation.model, folder) or evaluation.task != task:
            found.append(f"evaluate: the metrics shown are of {evaluation.model} ({evaluation.task}), "
                         f"not {folder} ({task})")
        rows = evaluate.metrics_page.metrics.source_model.rowCount()
        if rows != len(metrics):
            found.append(f"evaluate: the metrics table has {rows} rows, the evaluation {len(metrics)} metrics")
    origin = train.read_state().result  # the run's origin: base model, task, inputs with its folder
    if origin is not None and origin.model is not None:
        written = getattr(origin.inputs, "output_dir", None)
        if written is not None and not _same(written, folder):
            found.append(f"train: the result's origin names the folder {written}, the run saved {folder}")
        if origin.model.task != task:
            found.append(f"train: the result's origin names task {origin.model.task!r}, the model's is {task!r}")
    result = getattr(train, "result", None)
    if result is None:
        found.append(f"train: no result is shown for the run into {folder}")
    elif not _same(result.output_dir, folder):
        found.append(f"train: the result shown is of {result.output_dir}, the run saved {folder}")
    return found


def train_then_evaluate(window: Any, inspector: Any, out: Path, scratch: Path, base_model: Path) -> None:
    """In a (restarted) window: train `base_model` for a few steps on the demo multiple-choice data into
    a fresh folder, wait for the end, click Evaluate…, wait for the evaluation and check the hand-off."""
    import screenshot

    from bertstudio.core.evaluate.adapters import evaluated_as
    from bertstudio.ui.tabs.train_tab import TrainTab

    train = next((tab for tab in window.task_tabs.values() if isinstance(tab, TrainTab)), None)
    evaluate = window.task_tabs.get("evaluate")
    if train is None or evaluate is None:
        inspector.problem("no Train or Evaluate tab")
        return
    if not base_model.is_dir():
        inspector.problem(f"no test model at {base_model}")
        return
    window.tabs.setCurrentWidget(train)
    train.task.setCurrentIndex(train.task.findData(TRAIN_TASK))
    train.base_model.setText(str(base_model))
    train.use_demo_data()
    folder = scratch / f"trained-{TRAIN_TASK}"
    train.output_dir.setText(str(folder))
    for name, value in (("max_steps", 4), ("batch_size", 4), ("max_length", 48), ("warmup_steps", 0),
                        ("eval_steps", 4)):
        getattr(train, name).setValue(value)
    before = evaluate.read_state().loaded
    train.start()
    if not wait_until(lambda: train.runner.busy, 10) or not wait_until(lambda: not train.runner.busy, 300):
        inspector.problem("the training run did not end within 5 minutes")
        return
    inspector.check()
    window.grab().save(str(out / "restart-train-done.png"))
    if train.result is None:
        notes = [note.text for note in getattr(train.notes, "notes", ())]
        inspector.problem(f"the training run gave no result: {notes[:1]}")
        return
    folder_now = train.result.output_dir
    if not train.evaluate_button.isVisibleTo(train) or not train.evaluate_button.isEnabled():
        inspector.problem("Train's Evaluate… button is not offered after the run")
        train.evaluate_result()
    else:
        train.evaluate_button.click()
    task = evaluated_as(TRAIN_TASK)
    if not wait_until(lambda: _evaluated(evaluate, folder_now), 300):
        inspector.problem(f"no evaluation of {folder_now} came (Evaluate held {before or 'no model'} before)")
    screenshot.settle(300)
    for line in handoff_problems(train, evaluate, folder_now, task):
        inspector.problem(line)
    inspector.check()
    window.grab().save(str(out / "restart-train-evaluate.png"))


def _evaluated(evaluate: Any, folder: str) -> bool:
    """Evaluate shows a finished evaluation of `folder`."""
    shown = evaluate.read_state().result
    return (not evaluate.runner.busy and shown is not None and shown.model is not None
            and _same(shown.model.source, folder))

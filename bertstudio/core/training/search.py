"""Hyperparameter search with Optuna: a seeded TPE sampler proposes each trial's settings, every
trial is one ordinary run of `engine.train` into `<output>/trials/trial-NN` (a real, loadable model
folder recorded in the runs index), and a MedianPruner hears the validation metric at each of the
run's evaluations and stops a trial that trails the median of earlier ones.

Afterwards the best finished trial's model is copied to `<output>` (built beside it, put in place
by renames, like the engine's save) with the finished trials kept under `<output>/trials` and the
table in `<output>/search.json`; pruned, stopped and failed trials leave no folder. A Stop or
Cancel mid-search ends the running trial, keeps the finished ones and still saves the best.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bertstudio.core import outputs
from bertstudio.core.errors import BertStudioError, InputError, TaskCancelled
from bertstudio.core.json_values import dumps
from bertstudio.core.progress import Relay, TaskControl
from bertstudio.core.training import saving
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.events import TrainingEvent
from bertstudio.core.training.search_space import KNOWN_METRICS, SearchSpace, check_metric, default_space

SEARCH_FILE = "search.json"
TRIALS_DIR = "trials"
MAX_TRIALS = 1000  # each trial is a whole training run: more is a typo, not a plan
EVALS_PER_TRIAL = 4  # when the run sets no evaluation interval: the pruner needs something to compare


@dataclass(frozen=True)
class TrialRecord:
    """One trial as the CLI's --json, the Train tab's table and search.json show it."""

    number: int
    state: str  # finished, pruned, stopped, failed
    params: dict[str, float]
    value: float | None = None  # the searched metric at the trial's end (or where it was pruned)
    metrics: dict[str, float] = field(default_factory=dict)
    output_dir: str = ""  # the trial's model folder (finished trials only)
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"event": "trial", **asdict(self)}


@dataclass(frozen=True)
class TrialProgress:
    """A training event of the running trial (the Train tab's live curve, the CLI's lines)."""

    trial: int
    event: TrainingEvent


@dataclass(frozen=True)
class SearchResult:
    output_dir: str  # the best trial's model ("" when no trial finished)
    metric: str
    direction: str
    trials: tuple[TrialRecord, ...]
    best: TrialRecord | None
    stopped: bool
    importance: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"event": "search", "output_dir": self.output_dir, "metric": self.metric,
                "direction": self.direction, "stopped": self.stopped,
                "best": self.best.to_json() if self.best else None,
                "trials": [t.to_json() for t in self.trials], "importance": self.importance}


class _TrialControl(Relay):
    """The trial's control: its training events go out as TrialProgress and its validation metric to
    Optuna; the trial halts when pruned, when the user stops, or when the searched metric is not one the
    task reports. The search's Cancel is the trial's too."""

    def __init__(self, outer: TaskControl, number: int, trial: Any, metric: str,
                 stop_event: threading.Event | None) -> None:
        super().__init__(outer)
        self.number, self.trial, self.metric, self.stop_event = number, trial, metric, stop_event
        self.halt = threading.Event()
        self.pruned: list[float] = []
        self.reported: list[str] = []  # the metrics the task reports, when the searched one is not among them

    def report(self, message: str, fraction: float | None = None, payload: object = None) -> None:
        if isinstance(payload, TrainingEvent):
            self._heard(payload)
            payload = TrialProgress(self.number, payload)
        self.outer.report(f"Trial {self.number + 1}: {message}", None, payload)

    def _heard(self, event: TrainingEvent) -> None:
        if self.stop_event is not None and self.stop_event.is_set():
            self.halt.set()  # the user's Stop ends the running trial after this step
        if event.kind == "eval" and self.metric not in event.metrics:
            self.reported.extend(k for k in event.metrics if k in KNOWN_METRICS)
            self.halt.set()  # at the first evaluation, not after every trial ran
        value = event.metrics.get(self.metric) if event.kind == "eval" else None
        if value is None or self.halt.is_set():
            return
        self.trial.report(value, event.step)
        if self.trial.should_prune():
            self.pruned.append(value)
            self.halt.set()


def study_for(space: SearchSpace, seed: int, trials: int) -> Any:
    """A seeded TPE study with a median pruner: the same seed proposes the same settings."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    startup = min(10, max(2, trials // 2))  # random at first, then TPE models what it saw
    return optuna.create_study(
        direction="maximize" if space.direction == "maximize" else "minimize",
        sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0),
    )


def _prepare_output(output: Path, config: TrainConfig) -> Path:
    """The output folder (checked like a run's, and locked): an earlier search's trials removed; made and
    marked ours so its trials may live inside."""
    trials = output / TRIALS_DIR
    if trials.is_dir():  # an earlier search's (the output is ours: check_output said so)
        for old in trials.iterdir():  # trial folders and their checkpoints; a foreign file stays
            saving.remove_ours(old)
    if not output.exists():
        saving.write_marker(output, "search", config.task)
    return output


def _trial_config(config: TrainConfig, space: SearchSpace, params: dict[str, Any], folder: Path) -> TrainConfig:
    trial = replace(space.apply(config, params), output_dir=str(folder), overwrite=True, resume=False)
    if trial.eval_steps == 0:
        from bertstudio.core.training.engine import plan

        trial = replace(trial, eval_steps=max(1, plan(trial).total_steps // EVALS_PER_TRIAL))
    return trial


def search(config: TrainConfig, trials: int, space: SearchSpace | None = None, control: TaskControl | None = None,
           stop_event: threading.Event | None = None) -> SearchResult:
    """Run `trials` trials; each finished trial is reported (payload TrialRecord) as it ends. The output
    folder is locked for the whole search: a second search or run into it is refused, naming this one."""
    control = control or TaskControl()
    space = space or default_space(config)
    if trials < 1:
        raise InputError("A search needs at least one trial.")
    if trials > MAX_TRIALS:
        raise InputError(f"A search runs at most {MAX_TRIALS:,} trials (got {trials:,}).",
                         hint="Each trial is a whole training run; start with 10 to 30.")
    check_metric(space.metric)
    config.validate()
    if config.resume or config.distill is not None or config.scratch is not None:
        raise InputError("A search fine-tunes a model: resume, distillation and pre-training from scratch are "
                         "not searched.", hint="Train those runs on their own.")
    if not config.eval_file and config.eval_share <= 0:
        raise InputError("A search compares trials on validation data, and there is none.",
                         hint="Give a validation file or hold out a share of the training file.")
    output = saving.check_output(config.output_dir, replace=config.overwrite)
    with outputs.folder_lock(output, "search"):
        return _run_trials(config, trials, space, _prepare_output(output, config), control, stop_event)


def _unknown_metric(metric: str, reported: list[str]) -> InputError:
    return InputError(f"The validation metric '{metric}' is not one this task reports.",
                      hint="Use one of: " + ", ".join(reported) + " (--search-metric, or \"metric\" in the space).")


def _run_trials(config: TrainConfig, trials: int, space: SearchSpace, output: Path, control: TaskControl,
                stop_event: threading.Event | None) -> SearchResult:
    import optuna

    from bertstudio.core.training.engine import train

    study = study_for(space, config.seed, trials)
    records: list[TrialRecord] = []
    stopped = False
    for number in range(trials):
        if control.stop_requested or stop_event is not None and stop_event.is_set():
            stopped = True
            break
        trial = study.ask()
        params = {r.name: r.suggest(trial) for r in space.ranges}
        folder = output / TRIALS_DIR / f"trial-{number:02d}"
        watch = _TrialControl(control, number, trial, space.metric, stop_event)
        control.report(f"Trial {number + 1} of {trials}: " + ", ".join(f"{k} {v:g}" for k, v in params.items()),
                       number / trials)
        record: TrialRecord
        try:
            result = train(_trial_config(config, space, params, folder), watch, stop_event=watch.halt)
        except TaskCancelled:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            record = TrialRecord(number, "stopped", params, message="Cancelled.")
            stopped = True
        except BertStudioError as error:  # a diverged loss at a high learning rate fails only this trial
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            record = TrialRecord(number, "failed", params, message=str(error))
        else:
            record = _trained_record(study, watch, number, params, result, folder)
            stopped = stopped or (record.state == "stopped" and result.stopped)
        if record.state != "finished":
            _remove_trial(folder)
        records.append(record)
        control.report(f"Trial {number + 1} {record.state}", (number + 1) / trials, record)
        if stopped:
            break
    return _finish(config, output, space, study, records, stopped)


def _trained_record(study: Any, watch: _TrialControl, number: int, params: dict[str, float], result: Any,
                    folder: Path) -> TrialRecord:
    """A trained trial's record (told to Optuna); a searched metric the task does not report ends the search."""
    import optuna

    names = _metric_names(result.metrics)  # empty when no evaluation ran (a trial stopped early)
    if watch.reported or (names and watch.metric not in names):
        _remove_trial(folder)
        raise _unknown_metric(watch.metric, sorted(set(watch.reported) | names))
    value = result.metrics.get(f"eval_{watch.metric}")
    if watch.pruned:
        study.tell(watch.trial, state=optuna.trial.TrialState.PRUNED)
        return TrialRecord(number, "pruned", params, watch.pruned[-1], message=f"Pruned at step {result.step}.")
    if result.stopped or value is None:
        study.tell(watch.trial, state=optuna.trial.TrialState.FAIL)
        return TrialRecord(number, "stopped", params, value, message="Stopped before it finished.")
    study.tell(watch.trial, value)
    return TrialRecord(number, "finished", params, value, result.metrics, str(folder))


def _metric_names(metrics: dict[str, Any]) -> set[str]:
    return {k.removeprefix("eval_") for k in metrics if k.startswith("eval_")} & KNOWN_METRICS


def _remove_trial(folder: Path) -> None:
    saving.remove_ours(folder)
    saving.remove_ours(saving.checkpoints_dir(folder))


def importance(study: Any) -> dict[str, float]:
    """optuna.importance's fANOVA share per parameter (needs two finished trials that differ)."""
    import optuna

    finished = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if len(finished) < 2 or len({t.value for t in finished}) < 2:
        return {}
    try:
        return {k: float(v) for k, v in optuna.importance.get_param_importances(study).items()}
    except (RuntimeError, ValueError):  # e.g. every parameter constant over the finished trials
        return {}


def _finish(config: TrainConfig, output: Path, space: SearchSpace, study: Any, records: list[TrialRecord],
            stopped: bool) -> SearchResult:
    """The best finished trial's model at the output (with the trials inside it), atomically."""
    finished = [r for r in records if r.state == "finished" and r.value is not None]
    best = None
    if finished:
        pick = max if space.direction == "maximize" else min
        best = pick(finished, key=lambda r: r.value)  # type: ignore[arg-type,return-value]
    result = SearchResult(str(output) if best else "", space.metric, space.direction, tuple(records), best, stopped,
                          importance(study))
    table = dumps({**result.to_json(), "space": space.to_json(), "seed": config.seed}, indent=2)
    if best is None:
        (output / SEARCH_FILE).write_text(table, encoding="utf-8")
        return result
    partial = saving.partial_dir(output)
    saving.remove_ours(partial)
    with saving.saving_to(partial, where=output.parent):
        shutil.copytree(best.output_dir, partial)
        (partial / SEARCH_FILE).write_text(table, encoding="utf-8")
        (output / TRIALS_DIR).rename(partial / TRIALS_DIR)  # a rename: the trials are never copied or lost
    saving.replace_folder(partial, output)
    moved = {r.number: str(output / TRIALS_DIR / Path(r.output_dir).name) for r in finished}
    records = [replace(r, output_dir=moved.get(r.number, r.output_dir)) for r in records]
    best = next(r for r in records if r.number == best.number)
    return replace(result, trials=tuple(records), best=best)


def describe_trial(record: TrialRecord, metric: str) -> str:
    """One line for the CLI and the status bar."""
    params = ", ".join(f"{k} {v:.3g}" for k, v in record.params.items())
    value = f"  {metric} {record.value:.4f}" if record.value is not None else ""
    return f"trial {record.number + 1} {record.state}{value}  ({params})" + (
        f"  {record.message}" if record.message and record.state != "finished" else "")

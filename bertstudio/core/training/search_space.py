"""What a hyperparameter search may vary: ranges over TrainConfig fields, read from a JSON file or
the defaults, checked against the same option metadata the form and CLI use, and sampled with
Optuna's trial API (so the sampler, not our code, decides where to look next).

A space file is one JSON object, e.g.
    {"learning_rate": {"low": 1e-5, "high": 1e-4, "log": true},
     "batch_size": {"choices": [8, 16, 32]},
     "warmup_ratio": {"low": 0.0, "high": 0.2},
     "epochs": {"low": 1, "high": 4, "step": 1},
     "weight_decay": {"low": 0.0, "high": 0.1},
     "lora_rank": {"choices": [4, 8, 16]},
     "metric": "accuracy"}
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bertstudio.core.datafiles import parse_json
from bertstudio.core.errors import InputError
from bertstudio.core.files import read_text
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.options import options

# A space file names a few ranges: a few hundred bytes; anything near this bound is not one.
MAX_SPACE_BYTES = 1 << 20
SEARCHABLE = ("learning_rate", "batch_size", "warmup_ratio", "epochs", "weight_decay", "lora_rank")
INTEGER = {"batch_size", "lora_rank"}
# validation metrics where higher is better; anything else (loss, perplexity) is minimised
MAXIMISED = frozenset({"accuracy", "macro_f1", "f1", "exact_match", "pearson", "spearman", "precision", "recall",
                       "mlm_accuracy", "nsp_accuracy"})
# every validation metric a trainable reports (core/tasks/<task>/train.py) and the loss: a name outside
# them is a typo, refused before the first trial (the one a task does not report, at its first evaluation)
KNOWN_METRICS = MAXIMISED | {"loss"}


def check_metric(metric: str) -> str:
    """`metric` if some task reports it (eval_ prefix dropped); an InputError listing them otherwise."""
    name = metric.removeprefix("eval_")
    if name not in KNOWN_METRICS:
        raise InputError(f"'{metric}' is not a validation metric training reports.",
                         hint="Use one of: " + ", ".join(sorted(KNOWN_METRICS)) + ".")
    return name


@dataclass(frozen=True)
class Range:
    """One parameter's range: choices, or low..high (log-uniform with `log`, stepped with `step`)."""

    name: str
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    step: float | None = None
    choices: tuple[float, ...] = ()

    def suggest(self, trial: Any) -> float:
        """The trial's value, through Optuna's own suggest API (seeded by the study's sampler)."""
        if self.choices:
            return trial.suggest_categorical(self.name, list(self.choices))  # type: ignore[no-any-return]
        if self.name in INTEGER:
            return int(trial.suggest_int(self.name, int(self.low), int(self.high), log=self.log,
                                         step=int(self.step or 1)))
        return float(trial.suggest_float(self.name, self.low, self.high, log=self.log, step=self.step))

    def describe(self) -> str:
        if self.choices:
            return f"{self.name} in {{{', '.join(f'{c:g}' for c in self.choices)}}}"
        return f"{self.name} {self.low:g}..{self.high:g}" + (" (log)" if self.log else "")

    def to_json(self) -> dict[str, Any]:
        if self.choices:
            return {"choices": list(self.choices)}
        out: dict[str, Any] = {"low": self.low, "high": self.high}
        if self.log:
            out["log"] = True
        if self.step is not None:
            out["step"] = self.step
        return out


@dataclass(frozen=True)
class SearchSpace:
    """The ranges searched and the validation metric compared ("loss" when none is named)."""

    ranges: tuple[Range, ...]
    metric: str = "loss"
    notes: tuple[str, ...] = field(default=())

    @property
    def direction(self) -> str:
        return "maximize" if self.metric in MAXIMISED else "minimize"

    def apply(self, config: TrainConfig, params: dict[str, Any]) -> TrainConfig:
        """The trial's config: the base config with the sampled values (epochs as a float)."""
        values: dict[str, Any] = {name: int(v) if name in INTEGER else float(v) for name, v in params.items()}
        return replace(config, **values)

    def to_json(self) -> dict[str, Any]:
        return {**{r.name: r.to_json() for r in self.ranges}, "metric": self.metric}


def default_space(config: TrainConfig) -> SearchSpace:
    """Sensible ranges for fine-tuning a BERT-family model (the BERT paper's grid, widened a little).
    Epochs are left out when --max-steps fixes the length; the LoRA rank only when the run uses LoRA."""
    ranges = [Range("learning_rate", 1e-5, 1e-4, log=True), Range("batch_size", choices=(8, 16, 32)),
              Range("warmup_ratio", 0.0, 0.2), Range("weight_decay", 0.0, 0.1)]
    notes = []
    if config.max_steps > 0:
        notes.append("Epochs are not searched: max steps fixes each trial's length.")
    else:
        ranges.append(Range("epochs", 1, 4, step=1))
    if config.lora_rank > 0:
        ranges.append(Range("lora_rank", choices=(4, 8, 16)))
    return SearchSpace(tuple(ranges), notes=tuple(notes))


def _number(name: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"In the search space, {name}'s \"{key}\" must be a finite number, not "
                         f"{json.dumps(value, allow_nan=True)}.")
    return float(value)


def parse_range(name: str, spec: Any) -> Range:
    """One entry of a space file, checked: known name, numbers, low < high, inside the option's range."""
    if name not in SEARCHABLE:
        raise InputError(f"The search space names '{name}', which cannot be searched.",
                         hint=f"Use {', '.join(SEARCHABLE)} (and \"metric\").")
    if not isinstance(spec, dict):
        raise InputError(f"In the search space, {name} must be an object such as "
                         '{"low": 1e-5, "high": 1e-4} or {"choices": [8, 16]}.')
    unknown = set(spec) - {"low", "high", "log", "step", "choices"}
    if unknown:
        raise InputError(f"In the search space, {name} has unknown keys: {', '.join(sorted(unknown))}.",
                         hint="Use low, high, log, step or choices.")
    if "choices" in spec:
        choices = spec["choices"]
        if not isinstance(choices, list) or not choices:
            raise InputError(f"In the search space, {name}'s choices must be a non-empty list.")
        result = Range(name, choices=tuple(_number(name, "choices", c) for c in choices))
        values = list(result.choices)
    else:
        if "low" not in spec or "high" not in spec:
            raise InputError(f"In the search space, {name} needs \"low\" and \"high\" (or \"choices\").")
        low, high = _number(name, "low", spec["low"]), _number(name, "high", spec["high"])
        log = spec.get("log", False)
        step = _number(name, "step", spec["step"]) if "step" in spec else None
        if low >= high:
            raise InputError(f"In the search space, {name}'s low ({low:g}) must be below its high ({high:g}).")
        if not isinstance(log, bool) or (log and low <= 0):
            raise InputError(f"In the search space, {name}'s \"log\" must be true or false, and a log range "
                             "must start above 0.")
        if step is not None and (step <= 0 or log):
            raise InputError(f"In the search space, {name}'s step must be above 0 and not with \"log\".")
        result = Range(name, low, high, log=log, step=step)
        values = [low, high]
    option = {n: o for n, o, _d in options(TrainConfig)}[name]
    for value in values:
        if name in INTEGER and value != int(value):
            raise InputError(f"In the search space, {name} takes whole numbers, not {value:g}.")
        option.check(name, int(value) if name in INTEGER else value)  # the form's own range, same message
    return result


def parse_space(data: Any, config: TrainConfig) -> SearchSpace:
    """A space from a parsed JSON object; the metric defaults to the validation loss."""
    if not isinstance(data, dict) or not data:
        raise InputError("A search space must be a JSON object naming at least one parameter.",
                         hint='e.g. {"learning_rate": {"low": 1e-5, "high": 1e-4, "log": true}}')
    metric = data.get("metric", "loss")
    if not isinstance(metric, str) or not metric:
        raise InputError('The search space\'s "metric" must be a metric name such as "accuracy" or "loss".')
    ranges = tuple(parse_range(name, spec) for name, spec in data.items() if name != "metric")
    if not ranges:
        raise InputError("The search space names no parameter to search.", hint=f"Use {', '.join(SEARCHABLE)}.")
    if any(r.name == "epochs" for r in ranges) and config.max_steps > 0:
        raise InputError("The search space varies epochs, but max steps fixes each trial's length.",
                         hint="Leave epochs out of the space or set max steps to 0.")
    return SearchSpace(ranges, metric.removeprefix("eval_"))


def read_space(path: str | Path, config: TrainConfig) -> SearchSpace:
    """A space file; a missing or broken file is one clear InputError."""
    text = read_text(path, "search space file", MAX_SPACE_BYTES)  # refuses pipes, devices, loops, huge files
    return parse_space(parse_json(text, f"The search space file '{path}'"), config)

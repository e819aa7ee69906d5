"""What a run tells the outside: frozen events for the GUI thread and the JSON-lines log, the
plan known before any model is loaded, the result, and the recent-window speed and ETA."""

from __future__ import annotations

import math
import os
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bertstudio.core.json_values import dumps
from bertstudio.core.progress import TaskControl

EVENTS_FILE = "events.jsonl"
RATE_WINDOW = 20  # steps: speed and ETA follow the recent pace, not the average since the start


@dataclass(frozen=True)
class TrainingEvent:
    """One thing that happened in a run; plain values, safe to send to the GUI thread."""

    kind: str  # plan, step, eval, saving, saved, done
    step: int = 0
    max_steps: int = 0
    epoch: float | None = None
    loss: float | None = None
    learning_rate: float | None = None
    grad_norm: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    samples_per_second: float | None = None
    eta_seconds: float | None = None
    elapsed_seconds: float | None = None
    message: str = ""
    output_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: a number that is not finite (fp16's skipped step logs an infinite gradient norm) is
        left out, never written as the NaN or Infinity that JSON does not have."""
        out: dict[str, Any] = {"event": self.kind}
        for key, value in asdict(self).items():
            if isinstance(value, float) and not math.isfinite(value):
                continue
            if key != "kind" and value not in (None, "", {}):
                out[key] = value
        return out


@dataclass(frozen=True)
class Plan:
    """What a run will do, known before any model is loaded: the planned LR curve needs it."""

    train_examples: int
    eval_examples: int
    total_steps: int
    warmup_steps: int
    steps_per_epoch: int
    notes: tuple[str, ...] = ()  # e.g. numeric labels that were merged


@dataclass(frozen=True)
class TrainResult:
    output_dir: str
    task: str
    stopped: bool
    step: int
    max_steps: int
    metrics: dict[str, float]
    open_in: tuple[str, ...]
    events_file: str
    checkpoints_dir: str = ""  # left behind after a stop (resumable); empty when removed

    def to_json(self) -> dict[str, Any]:
        return {"event": "result", **asdict(self), "open_in": list(self.open_in)}


class RateWindow:
    """Samples/s and ETA from the last `size` steps (a restart, eval pause or warm-up ages out)."""

    def __init__(self, samples_per_step: int, size: int = RATE_WINDOW, clock: Any = time.perf_counter) -> None:
        self.samples_per_step = samples_per_step
        self.clock = clock
        self.marks: deque[tuple[float, int]] = deque(maxlen=size + 1)
        self.started = clock()

    def start(self, step: int) -> None:
        self.started = self.clock()
        self.marks.clear()
        self.marks.append((self.started, step))

    def mark(self, step: int) -> None:
        self.marks.append((self.clock(), step))

    def elapsed(self) -> float:
        return self.clock() - self.started

    def rate(self, step: int, max_steps: int) -> tuple[float | None, float | None]:
        """(samples per second, seconds left) over the window; None until two marks exist."""
        if len(self.marks) < 2:
            return None, None
        (t0, s0), (t1, s1) = self.marks[0], self.marks[-1]
        if t1 <= t0 or s1 <= s0:
            return None, None
        per_step = (t1 - t0) / (s1 - s0)
        return self.samples_per_step / per_step, per_step * max(0, max_steps - step)


def describe(event: TrainingEvent, full: bool = False) -> str:
    """One line for a progress message; `full` (the CLI's lines): with learning rate, speed and ETA."""
    if event.kind == "step":
        lr = f"  lr {event.learning_rate:.3g}" if full and event.learning_rate is not None else ""
        rate = f"  {event.samples_per_second:.1f} samples/s" if full and event.samples_per_second else ""
        eta = f"  ETA {event.eta_seconds:.0f}s" if full and event.eta_seconds is not None else ""
        return f"step {event.step}/{event.max_steps}  loss {event.loss:.4f}{lr}{rate}{eta}"
    if event.kind == "eval":
        return ("eval at " if full else "") + f"step {event.step}: " + ", ".join(
            f"{k} {v:.4f}" for k, v in event.metrics.items())
    return event.message or event.kind


@dataclass(frozen=True)
class Preparing:
    """Progress before the first step (tokenizing, counting QA windows): the CLI prints it (with --json as
    {"event": "prepare", "message"}), the Train tab shows its message; never in the run's event log."""

    message: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "prepare", "message": self.message}


def preparing(control: Any, message: str, fraction: float | None = None) -> None:
    """Report `message` as Preparing progress. `control`: a TaskControl, or None (no one listens)."""
    if control is not None:
        control.report(message, fraction, payload=Preparing(message))


class EventLog:
    """The run's JSON-lines event log (the main process writes it) and the progress each event reports."""

    def __init__(self, path: Path, main: bool, append: bool, control: TaskControl) -> None:
        self.path, self.main, self.control = path, main, control
        self.file = path.open("a" if append else "w", encoding="utf-8") if main else open(os.devnull, "w")  # noqa: SIM115
        self._lock = threading.Lock()

    def emit(self, event: TrainingEvent) -> None:
        if not self.main:
            return
        with self._lock:
            self.file.write(dumps(event.to_json()) + "\n")
            self.file.flush()
        fraction = event.step / event.max_steps if event.max_steps else None
        self.control.report(describe(event), fraction, payload=event)

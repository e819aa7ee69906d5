"""A run's curves (training loss, learning rate, each validation metric by step) read from its
JSON-lines event log (core/training/events.EVENTS_FILE).

The log is ours but may be damaged, edited or huge (one line per logged step), so it is read
through one border: a regular file, read line by line up to a bound, every line or value of the
wrong shape skipped. A recorded run keeps at most MAX_POINTS points per series, evenly thinned
(the last point always kept), so the runs index stays small however long a run was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.files import regular_file
from bertstudio.core.json_values import finite_number, step_number

MAX_EVENTS_BYTES = 256 * 1024 * 1024  # a log larger than this is read up to here
MAX_LINE_BYTES = 64 * 1024
MAX_POINTS = 1000  # per series in a record: enough for a plot, small enough for a listing
MAX_SERIES = 32  # validation metrics kept per run

Points = tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Curves:
    """(step, value) series, by step: the loss and learning rate of training steps, and each
    validation metric (named without its "eval_" prefix, as the live plot names it)."""

    loss: Points = ()
    learning_rate: Points = ()
    evals: dict[str, Points] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.loss or self.learning_rate or self.evals)

    def series(self) -> dict[str, Points]:
        """Every series by name: "loss", "learning_rate", "eval <metric>"."""
        out = {"loss": self.loss, "learning_rate": self.learning_rate}
        out.update({f"eval {name}": points for name, points in self.evals.items()})
        return {name: points for name, points in out.items() if points}

    def thinned(self, limit: int = MAX_POINTS) -> Curves:
        return Curves(thin(self.loss, limit), thin(self.learning_rate, limit),
                      {name: thin(points, limit) for name, points in self.evals.items()})

    def to_json(self) -> dict[str, Any]:
        return {"loss": [list(p) for p in self.loss], "learning_rate": [list(p) for p in self.learning_rate],
                "evals": {name: [list(p) for p in points] for name, points in self.evals.items()}}

    @staticmethod
    def from_json(value: object) -> Curves:
        """The valid points of a recorded curves object; anything of the wrong shape is left out."""
        if not isinstance(value, dict):
            return Curves()
        evals = value.get("evals")
        named = {name: _points(points) for name, points in list(evals.items())[:MAX_SERIES]
                 if isinstance(name, str) and len(name) <= 100} if isinstance(evals, dict) else {}
        return Curves(_points(value.get("loss")), _points(value.get("learning_rate")),
                      {name: points for name, points in named.items() if points})


def _points(value: object, limit: int = MAX_POINTS * 4) -> Points:
    if not isinstance(value, list):
        return ()
    out = []
    for item in value[:limit]:
        if isinstance(item, list) and len(item) == 2:
            step, number = step_number(item[0]), finite_number(item[1])
            if step is not None and number is not None:
                out.append((step, number))
    return tuple(sorted(out))


def thin(points: Points, limit: int = MAX_POINTS) -> Points:
    """At most `limit` points, evenly spaced by index, the first and last kept."""
    if len(points) <= limit or limit < 2:
        return points
    picks = sorted({round(i * (len(points) - 1) / (limit - 1)) for i in range(limit)})
    return tuple(points[i] for i in picks)


def _latest(points: dict[int, float]) -> Points:
    return tuple(sorted(points.items()))


def parse_events(lines: Any) -> Curves:
    """Curves from an iterable of event-log lines (bytes or text). A resumed run's log repeats the
    steps after its checkpoint: the later value of a step wins, as the resumed run drew it."""
    loss: dict[int, float] = {}
    rate: dict[int, float] = {}
    evals: dict[str, dict[int, float]] = {}
    for line in lines:
        if len(line) > MAX_LINE_BYTES:
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(event, dict) or (step := step_number(event.get("step"))) is None:
            continue
        kind = event.get("event")
        if kind == "step":
            if (value := finite_number(event.get("loss"))) is not None:
                loss[step] = value
            if (value := finite_number(event.get("learning_rate"))) is not None:
                rate[step] = value
        elif kind == "eval" and isinstance(event.get("metrics"), dict):
            for name, raw in event["metrics"].items():
                value = finite_number(raw)
                if isinstance(name, str) and len(name) <= 100 and value is not None and (
                        name in evals or len(evals) < MAX_SERIES):
                    evals.setdefault(name, {})[step] = value
    return Curves(_latest(loss), _latest(rate), {name: _latest(points) for name, points in evals.items()})


def read_curves(path: str | Path) -> Curves:
    """The curves in an event log; empty when it is missing or not a readable regular file
    (a run that failed before its first step has none)."""
    try:
        checked = regular_file(path, "training event log", max_bytes=1 << 62)
        with checked.open("rb") as stream:
            return parse_events(_bounded_lines(stream, MAX_EVENTS_BYTES))
    except (InputError, OSError):
        return Curves()


def _bounded_lines(stream: Any, limit: int) -> Any:
    read = 0
    for line in stream:
        read += len(line)
        if read > limit:
            return
        yield line

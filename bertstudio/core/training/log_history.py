"""The curves a resumed run already drew: the `log_history` of the checkpoint it resumes from.

After Resume the live plot used to start at the resumed step, the steps before it gone. They are
in the checkpoint's `trainer_state.json`; this reads them back. The file is ours but may be
damaged or edited, so it is read through one border: bounded size, bounded entries, and any
entry or value of the wrong type skipped (a damaged history never stops the run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.files import read_text
from bertstudio.core.json_values import finite_number, step_number

STATE_FILE = "trainer_state.json"
MAX_STATE_BYTES = 64 * 1024 * 1024  # a million logged steps is ~100 MiB; the plot needs far fewer
MAX_ENTRIES = 200_000
SKIPPED_METRICS = ("_runtime", "_per_second")  # timings, not scores (as the live callback skips them)


@dataclass(frozen=True)
class LogHistory:
    """Points before the resumed step: (step, loss, learning rate or None) and (step, metrics)."""

    steps: tuple[tuple[int, float, float | None], ...] = ()
    evals: tuple[tuple[int, dict[str, float]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.steps or self.evals)


def parse_history(data: Any) -> LogHistory:
    """The valid points of a parsed trainer_state; anything of the wrong shape is left out."""
    history = data.get("log_history") if isinstance(data, dict) else None
    if not isinstance(history, list):
        return LogHistory()
    steps: list[tuple[int, float, float | None]] = []
    evals: list[tuple[int, dict[str, float]]] = []
    for entry in history[:MAX_ENTRIES]:
        if not isinstance(entry, dict):
            continue
        step = step_number(entry.get("step"))
        if step is None:
            continue
        loss = finite_number(entry.get("loss"))
        if loss is not None:
            steps.append((step, loss, finite_number(entry.get("learning_rate"))))
            continue
        metrics = {key[5:]: number for key, value in entry.items()
                   if isinstance(key, str) and key.startswith("eval_") and not key.endswith(SKIPPED_METRICS)
                   and (number := finite_number(value)) is not None}
        if metrics:
            evals.append((step, metrics))
    steps.sort(key=lambda point: point[0])
    evals.sort(key=lambda point: point[0])
    return LogHistory(tuple(steps), tuple(evals))


def read_history(checkpoint: str | Path) -> LogHistory:
    """The log history in `checkpoint`/trainer_state.json; empty when missing or unreadable."""
    try:
        text = read_text(Path(checkpoint) / STATE_FILE, "trainer state", MAX_STATE_BYTES)
        return parse_history(json.loads(text))
    except (InputError, ValueError, RecursionError):
        return LogHistory()


def newest_checkpoint(ckpt_dir: str | Path) -> Path | None:
    """The highest-numbered checkpoint-N folder: the one a resume uses once the incomplete newer
    ones were removed (the engine does that before it reports its plan)."""
    best: tuple[int, Path] | None = None
    folder = Path(ckpt_dir)
    if not folder.is_dir():
        return None
    for child in folder.glob("checkpoint-*"):
        number = child.name.rsplit("-", 1)[-1]
        if number.isascii() and number.isdigit() and child.is_dir() and (best is None or int(number) > best[0]):
            best = (int(number), child)
    return best[1] if best else None

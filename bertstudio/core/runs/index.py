"""The runs index: one small JSON record per training run, in a per-user folder.

Where: `$BERTSTUDIO_RUNS_DIR`, else `$XDG_STATE_HOME/bertstudio/runs` (default
`~/.local/state/bertstudio/runs`), the place of history that outlives a session. Not beside
the outputs: a user trains into folders anywhere, and the Runs page must list every run without
being told where to look; each record names its output folder instead.

Why one file per run: two runs ending at once (two windows, a CLI beside the window, a search's
trials) each write only their own `<id>.json`, atomically (written beside, then renamed), so
no entry is ever lost or half-written and no lock is needed; listing is reading the folder.
Every record is read through one border (size, shape, types), and a bad one is skipped.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from bertstudio.core.files import small_json_or_none
from bertstudio.core.json_values import dumps
from bertstudio.core.outputs import write_text
from bertstudio.core.runs.curves import Curves

RUNS_DIR_ENV = "BERTSTUDIO_RUNS_DIR"
SUFFIX = ".json"
STATUSES = ("finished", "stopped", "failed")
MAX_RECORD_BYTES = 4 * 1024 * 1024  # curves of at most curves.MAX_POINTS points per series fit easily
MAX_RUNS = 10_000  # records listed, newest first
MAX_TEXT = 4096


def runs_dir() -> Path:
    """$BERTSTUDIO_RUNS_DIR, else $XDG_STATE_HOME/bertstudio/runs (default ~/.local/state/...)."""
    chosen = os.environ.get(RUNS_DIR_ENV)
    if chosen:
        return Path(chosen).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "bertstudio" / "runs"


def new_id(now: float | None = None) -> str:
    """Sortable by start time (to the millisecond), unique across processes: 20261126-182706-042-3f9a1c2b."""
    now = time.time() if now is None else now
    millis = int(now * 1000) % 1000
    return f"{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}-{millis:03d}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class RunRecord:
    """What one run was and what came of it; plain values (safe for the GUI thread and JSON)."""

    id: str
    task: str
    status: str  # finished, stopped, failed
    started: str  # local time, ISO 8601 to the second
    duration_seconds: float
    device: str
    output_dir: str
    model: str  # the base model as given
    data: str  # fingerprint: "sha256 <16 hex> of the training file, <n> rows trained on" ("" if unknown)
    config: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: Curves = field(default_factory=Curves)
    open_in: tuple[str, ...] = ()  # the tabs the model opens in (empty: no model was saved)
    step: int = 0
    max_steps: int = 0
    error: str = ""  # why a failed run failed

    def to_json(self) -> dict[str, Any]:
        fields_ = {f.name: getattr(self, f.name) for f in fields(self)}  # shallow: asdict copied the curves deep
        return {**fields_, "open_in": list(self.open_in), "curves": self.curves.to_json()}

    def summary_json(self) -> dict[str, Any]:
        """The record without its curves (what `bertstudio runs --json` lists)."""
        out = self.to_json()
        del out["curves"]
        return out

    @staticmethod
    def from_json(value: object) -> RunRecord | None:
        """The record, or None unless `value` is one (every field checked)."""
        if not isinstance(value, dict):
            return None
        texts = {name: value.get(name) for name in ("id", "task", "status", "started", "device", "output_dir",
                                                      "model", "data", "error")}
        if not all(isinstance(v, str) and len(v) <= MAX_TEXT for v in texts.values()):
            return None
        if not texts["id"] or texts["status"] not in STATUSES or not _safe_id(str(texts["id"])):
            return None
        numbers = {name: value.get(name) for name in ("duration_seconds", "step", "max_steps")}
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 2**63
                   for v in numbers.values()):  # NaN fails the comparison, Infinity the bound
            return None
        config, metrics, open_in = value.get("config"), value.get("metrics"), value.get("open_in")
        if not isinstance(config, dict) or not isinstance(metrics, dict) or not isinstance(open_in, list):
            return None
        counts: dict[str, float] = {name: float(v) for name, v in numbers.items()}  # type: ignore[arg-type]
        return RunRecord(
            **texts,  # type: ignore[arg-type]
            duration_seconds=counts["duration_seconds"], step=int(counts["step"]), max_steps=int(counts["max_steps"]),
            config=config,
            metrics={k: float(v) for k, v in metrics.items()
                     if isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool)},
            open_in=tuple(k for k in open_in if isinstance(k, str) and len(k) <= 100),
            curves=Curves.from_json(value.get("curves")),
        )


def training_kind(run: RunRecord) -> str:
    """'LoRA r=8' for an adapter run, 'full' for a full fine-tune (legends and the table tell them apart)."""
    rank = run.config.get("lora_rank")
    return f"LoRA r={rank}" if isinstance(rank, int) and not isinstance(rank, bool) and rank > 0 else "full"


def resumed_later(runs: list[RunRecord]) -> dict[str, str]:
    """Stopped run id -> the id of a later run into the same folder (a resume): the folder now holds
    that run's model, not the stopped one's. `runs` newest first, as list_runs gives them."""
    newest: dict[str, str] = {}
    later: dict[str, str] = {}
    for run in runs:
        if run.status == "stopped" and run.output_dir in newest:
            later[run.id] = newest[run.output_dir]
        newest.setdefault(run.output_dir, run.id)
    return later


def _safe_id(run_id: str) -> bool:
    """An id names a file in the runs folder: letters, digits and dashes only (never a path)."""
    return 0 < len(run_id) <= 64 and all(c.isascii() and (c.isalnum() or c == "-") for c in run_id)


def record_path(run_id: str, folder: Path | None = None) -> Path:
    if not _safe_id(run_id):
        raise ValueError(f"not a run id: {run_id!r}")
    return (folder or runs_dir()) / f"{run_id}{SUFFIX}"


def write_record(record: RunRecord, folder: Path | None = None) -> Path:
    """Write (or replace) the run's own record atomically: written beside, then renamed."""
    path = record_path(record.id, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, dumps(record.to_json()))  # a diverged loss: null and a note


def read_record(path: Path) -> RunRecord | None:
    """One record file, or None unless it is a small regular file holding a valid record."""
    data = small_json_or_none(path, MAX_RECORD_BYTES)
    if data is None:
        return None
    record = RunRecord.from_json(data)
    return record if record is not None and path.name == f"{record.id}{SUFFIX}" else None


def list_runs(folder: Path | None = None, limit: int = MAX_RUNS) -> list[RunRecord]:
    """Every valid record, newest first (ids sort by start time); bad or foreign files are skipped."""
    folder = folder or runs_dir()
    try:
        names = sorted((entry.name for entry in os.scandir(folder)
                        if entry.name.endswith(SUFFIX) and not entry.name.startswith(".")), reverse=True)
    except OSError:
        return []
    found = []
    for name in names[:limit]:
        record = read_record(folder / name)
        if record is not None:
            found.append(record)
    return found


def forget(run_id: str, folder: Path | None = None) -> bool:
    """Remove a run's record (not its files); True if it was there."""
    path = record_path(run_id, folder)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True

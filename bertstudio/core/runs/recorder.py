"""The engine's hook: a run is recorded when it ends, however it ends (finished, stopped, failed).

Recording never changes how a run ends: a record that cannot be written (a read-only home, a
full disk) is logged and the run's own result or error goes on unchanged.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import TaskCancelled
from bertstudio.core.runs import index
from bertstudio.core.runs.curves import read_curves
from bertstudio.core.training.events import EVENTS_FILE
from bertstudio.core.training.resume import RunIdentity
from bertstudio.core.training.saving import marker_run

log = logging.getLogger(__name__)


def _plain(config: Any) -> dict[str, Any]:
    """The config as JSON values (nested dataclasses as objects; anything else as text)."""
    value = asdict(config) if is_dataclass(config) and not isinstance(config, type) else dict(config)
    return dict(json.loads(json.dumps(value, default=str)))


def _fingerprint(folder: Path) -> str:
    """The training data's fingerprint a marker recorded (resume.RunIdentity.data), or ""."""
    identity = RunIdentity.from_json(marker_run(folder))
    return identity.data if identity is not None else ""


class RunRecorder:
    """Started as a run begins (its config checked and its output folder known), told how it ended."""

    def __init__(self, config: Any, output: Path, folder: Path | None = None) -> None:
        self.config, self.output = config, output
        self.folder = folder  # the runs index (default index.runs_dir())
        self.wall_start = time.time()
        self.clock_start = time.perf_counter()
        self.id = index.new_id(self.wall_start)
        self.written: Path | None = None

    def _record(self, status: str, events: Path, fingerprint_from: Path, **fields: Any) -> None:
        try:
            record = index.RunRecord(
                id=self.id, task=str(self.config.task), status=status,
                started=time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.wall_start)),
                duration_seconds=round(time.perf_counter() - self.clock_start, 3),
                device=str(self.config.device), output_dir=str(self.output), model=str(self.config.model or ""),
                data=_fingerprint(fingerprint_from), config=_plain(self.config),
                curves=read_curves(events).thinned(), **fields)
            self.written = index.write_record(record, self.folder)
        except (OSError, ValueError, TypeError) as error:  # see the module docstring
            log.warning("The run could not be recorded in the runs index: %s", error)

    def finished(self, result: Any) -> None:
        """A saved model (finished, or stopped early and saved): its folder holds the event log."""
        metrics = {k: float(v) for k, v in result.metrics.items() if isinstance(v, int | float)}
        self._record("stopped" if result.stopped else "finished", Path(result.events_file), self.output,
                     metrics=metrics, open_in=tuple(result.open_in), step=int(result.step),
                     max_steps=int(result.max_steps))

    def failed(self, error: BaseException, checkpoints: Path) -> None:
        """No model saved: call before the checkpoints folder (its log and marker) is cleaned up.
        A cancel before any model was saved is "stopped"; anything else "failed", with its message."""
        status = "stopped" if isinstance(error, TaskCancelled | KeyboardInterrupt) else "failed"
        message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        self._record(status, checkpoints / EVENTS_FILE, checkpoints, error=str(message)[: index.MAX_TEXT])

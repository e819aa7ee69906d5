"""Progress out, stop in: the one contract between long core work and whoever runs it.

The CLI passes a TaskControl that prints progress to stderr; the Qt worker passes one that
emits a signal. Core code never knows which (Orange3's TaskState, without Qt).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from bertstudio.core.errors import TaskCancelled


@dataclass(frozen=True)
class ProgressEvent:
    """One step of long work. `fraction` is None when the total is unknown."""

    message: str
    fraction: float | None = None
    payload: object = None


class TaskControl:
    """Carries progress events out of core work and a stop request into it."""

    def __init__(self, on_progress: Callable[[ProgressEvent], None] | None = None) -> None:
        self._on_progress = on_progress
        self._stop = threading.Event()

    def report(self, message: str, fraction: float | None = None, payload: object = None) -> None:
        if self._on_progress is not None:
            self._on_progress(ProgressEvent(message, fraction, payload))

    def request_stop(self) -> None:
        self._stop.set()

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def check(self) -> None:
        """Raise TaskCancelled if a stop was requested; call it between steps."""
        if self._stop.is_set():
            raise TaskCancelled()



class Relay(TaskControl):
    """A control inside another's work (a share of a bar, a search's trial, a run's plan): Stop and Cancel
    are the outer control's; `report` passes through, and subclasses reshape it."""

    def __init__(self, outer: TaskControl) -> None:
        super().__init__()
        self.outer = outer

    def report(self, message: str, fraction: float | None = None, payload: object = None) -> None:
        self.outer.report(message, fraction, payload)

    def request_stop(self) -> None:
        self.outer.request_stop()

    @property
    def stop_requested(self) -> bool:
        return self.outer.stop_requested

    def check(self) -> None:
        self.outer.check()

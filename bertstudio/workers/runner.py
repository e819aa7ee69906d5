"""TaskRunner: one piece of model work at a time for one owner (a tab), never on the GUI thread.

Built on superqt's `create_worker`. What it adds is Orange3's ConcurrentMixin discipline:
starting a new job supersedes the old one (stop requested, its late signals dropped), and
progress comes out of plain core functions through a `TaskControl` instead of yields.
"""

from __future__ import annotations

import itertools
import logging
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QObject, QThreadPool, Signal

from bertstudio.core.errors import TaskCancelled
from bertstudio.core.progress import ProgressEvent, TaskControl

if TYPE_CHECKING:
    from superqt.utils import WorkerBase

log = logging.getLogger(__name__)


class TaskRunner(QObject):
    """Runs `func(*args, control=TaskControl, **kwargs)` in the pool; signals only for the newest job."""

    started = Signal()
    progress = Signal(object)  # ProgressEvent
    result = Signal(object)  # whatever func returned
    error = Signal(object)  # the exception (TaskCancelled is reported as `cancelled`, not here)
    cancelled = Signal()
    finished = Signal()  # after result, error or cancelled of the newest job

    _live: ClassVar[weakref.WeakSet[TaskRunner]] = weakref.WeakSet()
    _ids = itertools.count(1)
    _progress_from_thread = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job = 0
        self._control: TaskControl | None = None
        self._worker: WorkerBase | None = None
        self._progress_from_thread.connect(self._on_progress)
        TaskRunner._live.add(self)

    @property
    def busy(self) -> bool:
        return self._control is not None

    def start(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
        """Start a job, superseding any running one. Returns the job's id."""
        from superqt.utils import create_worker  # imported on first use: superqt takes ~0.3 s to import

        self.cancel(emit=False)
        job = next(TaskRunner._ids)
        self._job = job
        control = TaskControl(on_progress=lambda event: self._progress_from_thread.emit(job, event))
        self._control = control
        # _ignore_errors: our own errored handler reports them; superqt would re-raise in the GUI thread.
        worker = create_worker(func, *args, control=control, _start_thread=False, _ignore_errors=True, **kwargs)
        worker.returned.connect(lambda value: self._on_returned(job, value))
        worker.errored.connect(lambda exc: self._on_errored(job, exc))
        self._worker = worker
        self.started.emit()
        worker.start()
        return job

    def cancel(self, emit: bool = True) -> None:
        """Ask the running job to stop at its next check; its results will be dropped."""
        if self._control is None:
            return
        self._control.request_stop()
        self._control = None
        self._worker = None
        self._job = 0
        if emit:
            self.cancelled.emit()
            self.finished.emit()

    def _current(self, job: int) -> bool:
        return job == self._job and self._control is not None

    def _on_progress(self, job: int, event: ProgressEvent) -> None:
        if self._current(job):
            self.progress.emit(event)

    def _on_returned(self, job: int, value: Any) -> None:
        if self._current(job):
            self._control = None
            self.result.emit(value)
            self.finished.emit()

    def _on_errored(self, job: int, exc: BaseException) -> None:
        if not self._current(job):
            return
        self._control = None
        if isinstance(exc, TaskCancelled):
            self.cancelled.emit()
        else:
            log.debug("job %s failed", job, exc_info=exc)
            self.error.emit(exc)
        self.finished.emit()

    @classmethod
    def stop_all(cls) -> None:
        for runner in list(cls._live):
            runner.cancel(emit=False)

    @classmethod
    def any_busy(cls) -> bool:
        return any(runner.busy for runner in list(cls._live))


def configure_pool(min_threads: int = 8) -> None:
    """The global pool defaults to one thread per core (2 here): a long training run and a
    model load must not wait behind each other."""
    pool = QThreadPool.globalInstance()
    pool.setMaxThreadCount(max(min_threads, pool.maxThreadCount()))


def shutdown(timeout_ms: int = 10_000) -> bool:
    """Stop every job and wait (bounded) for the pool to drain; True if it drained."""
    TaskRunner.stop_all()
    return QThreadPool.globalInstance().waitForDone(timeout_ms)

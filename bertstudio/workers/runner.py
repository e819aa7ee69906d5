"""TaskRunner: one piece of model work at a time for one owner (a tab), never on the GUI thread.

Built on superqt's `create_worker`, with Orange3's ConcurrentMixin discipline and one more rule:
the runner tells the truth. `busy` stays True until the worker thread has really returned,
even after Cancel; a new request while a job runs cancels that job and starts once it has
really ended (supersede, never two jobs of one tab at once; `start` itself never blocks); only
the newest pending request is kept.
Progress comes out of plain core functions through a `TaskControl` instead of yields.
"""

from __future__ import annotations

import itertools
import logging
import threading
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, QObject, QThreadPool, Signal

from bertstudio.core.errors import TaskCancelled
from bertstudio.core.progress import ProgressEvent, TaskControl

if TYPE_CHECKING:
    from superqt.utils import WorkerBase

log = logging.getLogger(__name__)


class _Relay(QObject):
    """A job's own signal source, alive as long as the job: the worker thread never emits on an
    object that closing the window could delete ("Signal source has been deleted")."""

    progress = Signal(object)


@dataclass(eq=False)
class _Job:
    id: int
    func: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    control: TaskControl
    relay: _Relay
    origin: str  # where start() was called, for the thread-leak check
    owner: int = 0  # id() of its runner
    worker: WorkerBase | None = None
    outcome: tuple[str, Any] | None = None  # ("result", value) or ("error", exception)
    silent: bool = False  # superseded or cancelled without a signal: nothing is reported
    user_cancelled: bool = False
    returned: threading.Event = field(default_factory=threading.Event)

    @property
    def name(self) -> str:
        return getattr(self.func, "__qualname__", repr(self.func))


def _call(job: _Job) -> None:
    """Runs in the pool thread: the job's function, its outcome kept for the GUI thread."""
    try:
        job.outcome = ("result", job.func(*job.args, control=job.control, **job.kwargs))
    except Exception as error:  # noqa: BLE001 - every failure is reported through `error`
        job.outcome = ("error", error)
    finally:
        job.returned.set()


class TaskRunner(QObject):
    """Runs `func(*args, control=TaskControl, **kwargs)` in the pool; signals only for the newest job.

    Signals: `started` when a job begins running, `progress`, then one of `result`, `error`
    or `cancelled`, then `finished` once the runner is idle again (a superseded job reports
    nothing). `stopping` fires at once on cancel, so a view can say "Cancelling…".
    """

    started = Signal()
    progress = Signal(object)  # ProgressEvent
    result = Signal(object)  # whatever func returned
    error = Signal(object)  # the exception (TaskCancelled is reported as `cancelled`, not here)
    cancelled = Signal()
    finished = Signal()  # the runner is idle: its last job's thread has returned
    stopping = Signal()  # a stop was requested; `cancelled` follows when the work has really ended
    warned = Signal(str)  # a warning raised inside a job, formatted

    _live: ClassVar[weakref.WeakSet[TaskRunner]] = weakref.WeakSet()
    _running: ClassVar[set[_Job]] = set()  # every job whose thread has not been seen to end
    _kept: ClassVar[set[TaskRunner]] = set()  # parentless runners stay alive while busy
    _warnings_seen: ClassVar[set[str]] = set()
    _ids = itertools.count(1)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._active: _Job | None = None
        self._pending: _Job | None = None
        TaskRunner._live.add(self)

    @property
    def busy(self) -> bool:
        """True from start() until the work has really ended (its thread returned), Cancel or not."""
        return self._active is not None or self._pending is not None

    @property
    def stop_requested(self) -> bool:
        return self._active is not None and self._active.control.stop_requested

    def start(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
        """Start a job; a running one is cancelled and this one starts when it has ended. Returns its id."""
        origin = "".join(traceback.format_stack(limit=4)[:-1]).strip()
        relay = _Relay()
        relay.progress.connect(self._on_relay_progress)  # a bound slot: disconnected if we are deleted
        job = _Job(next(TaskRunner._ids), func, args, kwargs, TaskControl(on_progress=relay.progress.emit),
                   relay, origin, id(self))
        if self._active is None:
            self._launch(job)
        else:
            self._active.silent = True
            self._active.control.request_stop()
            self._pending = job  # an older pending request never ran: it is simply dropped
        return job.id

    def cancel(self, emit: bool = True) -> None:
        """Ask the running job to stop at its next check and drop any pending request. `busy` stays
        True until the job has really ended; then `cancelled` (if `emit`) and `finished` follow."""
        self._pending = None
        job = self._active
        if job is None:
            return
        first = not job.control.stop_requested
        job.control.request_stop()
        if emit:
            job.user_cancelled, job.silent = True, False
        elif not job.user_cancelled:
            job.silent = True
        if first or emit:
            self.stopping.emit()

    def wait(self, timeout_ms: int) -> bool:
        """Process events until idle or `timeout_ms` passed; True if idle. For tests: shutdown waits
        on the pool instead (`shutdown`), and the GUI never blocks on one runner."""
        deadline = QDeadlineTimer(timeout_ms)
        app = QCoreApplication.instance()
        while self.busy and not deadline.hasExpired():
            if app is not None:
                app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            if self._active is not None:
                self._active.returned.wait(0.01)
        return not self.busy

    # -- internals -----------------------------------------------------------------------------
    def _launch(self, job: _Job) -> None:
        from superqt.utils import create_worker  # imported on first use: superqt takes ~0.3 s to import

        self._active = job
        TaskRunner._running.add(job)
        if self.parent() is None:
            TaskRunner._kept.add(self)
        # _ignore_errors: _call reports failures itself; superqt would re-raise in the GUI thread.
        worker = create_worker(_call, job, _start_thread=False, _ignore_errors=True)
        worker.warned.connect(self._on_warned)
        worker.finished.connect(self._on_worker_finished)  # type: ignore[arg-type]
        job.worker = worker
        self.started.emit()
        worker.start()

    def _on_warned(self, args: tuple) -> None:
        """A warning inside a job (superqt records them all): once per text, to the log and `warned`."""
        message, category = args[0], args[1]
        text = f"{getattr(category, '__name__', 'Warning')}: {message}"
        if text in TaskRunner._warnings_seen:
            return
        TaskRunner._warnings_seen.add(text)
        log.info("%s", text)  # the window's log panel shows this logger; no stderr noise
        self.warned.emit(text)

    def _on_relay_progress(self, event: ProgressEvent) -> None:
        job = self._active
        if job is not None and self.sender() is job.relay and not job.control.stop_requested:
            self.progress.emit(event)

    def _on_worker_finished(self) -> None:
        """GUI thread, after the worker thread left the job's function: report, then the next job."""
        job = self._active
        if job is None or not job.returned.is_set():
            return  # not ours (an older worker's late signal)
        TaskRunner._running.discard(job)
        self._active = None
        pending, self._pending = self._pending, None
        if pending is not None:
            self._launch(pending)
            return
        kind, value = job.outcome or ("error", RuntimeError("the job ended without an outcome"))
        if job.user_cancelled or (kind == "error" and isinstance(value, TaskCancelled) and not job.silent):
            self.cancelled.emit()
        elif job.silent or job.control.stop_requested:
            pass  # cancelled without a signal: its result is dropped
        elif kind == "result":
            self.result.emit(value)
        else:
            log.debug("job %s failed", job.id, exc_info=value)
            self.error.emit(value)
        TaskRunner._kept.discard(self)
        self.finished.emit()

    # -- every runner ----------------------------------------------------------------------------
    @classmethod
    def stop_all(cls, keep: tuple[TaskRunner, ...] = ()) -> None:
        """Cancel every runner's work but `keep`'s (no `cancelled` signal); each reports `finished`
        when its work has really ended."""
        from shiboken6 import isValid

        for runner in list(cls._live):  # a runner whose widget was deleted has no signals left: its job is below
            if runner not in keep and isValid(runner):
                runner.cancel(emit=False)
        kept = {id(runner) for runner in keep}
        for job in list(cls._running):  # jobs whose runner was deleted while they ran
            if job.owner not in kept:
                job.control.request_stop()

    @classmethod
    def any_busy(cls) -> bool:
        return any(runner.busy for runner in list(cls._live))

    @classmethod
    def running_jobs(cls) -> list[str]:
        """Jobs whose thread has not returned: their function and where they were started."""
        for job in [job for job in list(cls._running) if job.returned.is_set()]:
            cls._running.discard(job)  # its runner was deleted before the end was seen
        return [f"{job.name} (job {job.id}), started at:\n{job.origin}" for job in list(cls._running)]


def configure_pool(min_threads: int = 8) -> None:
    """The global pool defaults to one thread per core (2 here): a long training run and a
    model load must not wait behind each other."""
    pool = QThreadPool.globalInstance()
    pool.setMaxThreadCount(max(min_threads, pool.maxThreadCount()))


def shutdown(timeout_ms: int = 10_000) -> bool:
    """Stop every job and wait (bounded) for the pool to drain; True if it drained. For after the
    event loop has ended (or tests): it blocks the calling thread up to `timeout_ms`."""
    TaskRunner.stop_all()
    return QThreadPool.globalInstance().waitForDone(timeout_ms)

"""The TrainerCallback between Trainer and the outside: its logs become TrainingEvents, and a
stop request ends the run after the current step, or at the next batch of an evaluation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bertstudio.core.training.events import RateWindow, TrainingEvent


class EvaluationStopped(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised from inside an evaluation when a stop was requested: the run then saves at once."""


def event_callback(emit: Callable[[TrainingEvent], None], should_stop: Callable[[], bool],
                   samples_per_step: int) -> Any:
    from transformers import TrainerCallback

    class _Callback(TrainerCallback):
        """Trainer's logs as TrainingEvents; a stop request ends the run after this step and saves."""

        def __init__(self) -> None:
            self.stopped = False
            self.window = RateWindow(samples_per_step)

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.window.start(state.global_step)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.window.mark(state.global_step)
            if should_stop():
                self.stopped = True
                control.should_training_stop = True
                control.should_save = True  # a resumable checkpoint of what was trained
                control.should_evaluate = False  # the user asked to stop: do not start an evaluation now

        def on_prediction_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if should_stop():
                self.stopped = True
                raise EvaluationStopped

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None,
                   **kwargs: Any) -> None:
            logs = logs or {}
            rate, eta = self.window.rate(state.global_step, state.max_steps)
            common = dict(step=state.global_step, max_steps=state.max_steps, epoch=logs.get("epoch", state.epoch),
                          samples_per_second=rate, eta_seconds=eta, elapsed_seconds=self.window.elapsed())
            if "loss" in logs:
                emit(TrainingEvent("step", loss=float(logs["loss"]), learning_rate=logs.get("learning_rate"),
                                   grad_norm=logs.get("grad_norm"), **common))
            elif any(k.startswith("eval_") for k in logs):
                metrics = {k[5:]: float(v) for k, v in logs.items()
                           if k.startswith("eval_") and isinstance(v, int | float)
                           and not k.endswith(("_runtime", "_per_second"))}
                emit(TrainingEvent("eval", metrics=metrics, **common))

    return _Callback()

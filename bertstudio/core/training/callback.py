"""The TrainerCallback between Trainer and the outside: its logs become TrainingEvents, a stop
request ends the run after the current step (or at the next batch of an evaluation), and a loss or
gradient norm that is not a finite number ends it at once, with no checkpoint of that step: the
engine then refuses to save the model (`diverged` says why)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bertstudio.core.training.events import RateWindow, TrainingEvent


class EvaluationStopped(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised from inside an evaluation when a stop was requested: the run then saves at once."""


def not_finite(logs: dict[str, Any], gradients: bool = True) -> str:
    """What in a training log is not a finite number ("the loss is nan"), or "". `gradients` False under fp16:
    its loss scaler meets an infinite gradient norm by design, skips that step and lowers the scale."""
    for key, name in (("loss", "the loss"), ("grad_norm", "the gradient norm"))[:2 if gradients else 1]:
        value = logs.get(key)
        if isinstance(value, int | float) and not math.isfinite(value):
            return f"{name} is {value}, not a finite number"
    return ""


def weights_finite(model: Any) -> bool:
    """Whether every parameter is a finite number (checked before a checkpoint or the model is saved)."""
    import torch

    with torch.no_grad():
        return all(bool(torch.isfinite(p).all()) for p in model.parameters() if p.is_floating_point())


def event_callback(emit: Callable[[TrainingEvent], None], should_stop: Callable[[], bool],
                   samples_per_step: int, loss_scaled: bool = False) -> Any:
    """The callback; `loss_scaled`: fp16 training, whose skipped steps log an infinite gradient norm."""
    from transformers import TrainerCallback

    class _Callback(TrainerCallback):
        """Trainer's logs as TrainingEvents; a stop request ends the run after this step and saves."""

        def __init__(self) -> None:
            self.stopped = False
            self.diverged = ""  # why the run was ended: a loss, gradient or weight that is not finite
            self.window = RateWindow(samples_per_step)

        def _diverge(self, control: Any, why: str, step: int) -> None:
            # the first reason stays, but the loss's (logged after the step's weights were seen) is said first
            if not self.diverged or "weights" in self.diverged and f"at step {step}:" in self.diverged:
                self.diverged = f"at step {step}: {why}"
            control.should_training_stop = True
            control.should_save = False  # never a checkpoint of weights that are (or will be) NaN
            control.should_evaluate = False

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.window.start(state.global_step)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.window.mark(state.global_step)
            if should_stop():
                self.stopped = True
                control.should_training_stop = True
                control.should_save = True  # a resumable checkpoint of what was trained
                control.should_evaluate = False  # the user asked to stop: do not start an evaluation now
            model = kwargs.get("model")  # a checkpoint is written only of finite weights
            if control.should_save and model is not None and not weights_finite(model):
                self._diverge(control, "the weights are not all finite numbers", state.global_step)

        def on_prediction_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if should_stop():
                self.stopped = True
                raise EvaluationStopped

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None,
                   **kwargs: Any) -> None:
            logs = logs or {}
            why = not_finite(logs, gradients=not loss_scaled)
            if why:
                self._diverge(control, why, state.global_step)
                return
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

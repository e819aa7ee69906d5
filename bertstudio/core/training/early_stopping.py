"""Early stopping on the validation metric: transformers' EarlyStoppingCallback with
`load_best_model_at_end`, so the model saved is the best evaluation's, not the last step's.

The engine asks this module for the TrainingArguments it needs (evaluate and checkpoint at one
interval, the task's metric, higher or lower better), the callback, and the event that tells the
plots where the best step was and where the run stopped. Also the checks of the settings of
training that need no model: early stopping without validation data, and the loss settings
(class weights, focal, multi-label) on a task whose loss is not a classifier's.
"""

from __future__ import annotations

import math
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.training.events import TrainingEvent

EVALS_PER_EPOCH = 1  # with no --eval-steps: evaluate once per epoch
EVALS_WITHOUT_EPOCHS = 10  # with --max-steps and no --eval-steps: ten evaluations in the run
BEST_EVENT = "best"  # the TrainingEvent kind: the best step and where the run stopped


def best_metric(trainable: Any) -> tuple[str, bool]:
    """(validation metric, higher is better) the task is judged by; the loss where it names none."""
    return trainable.best_metric


def check_settings(config: Any, trainable: Any) -> None:
    """Refused before anything loads: early stopping with nothing to validate on, and class weights,
    the focal loss or multi-label on a task that does not train a classifier's loss."""
    has_validation = bool(config.eval_file) or config.eval_share > 0
    if config.early_stopping > 0 and not has_validation:
        raise InputError("Early stopping needs validation data: give a validation file (--eval FILE) or hold out "
                         "a share of the training file (--eval-share > 0).")
    weighted = trainable is not None and trainable.weighted_loss
    asked = [flag for flag, on in (("--multi-label", config.multi_label),
                                   ("--class-weights balanced", config.class_weights != "none"),
                                   ("--loss focal", config.loss != "cross-entropy")) if on]
    if asked and not weighted:
        verb = "go" if len(asked) > 1 else "goes"
        raise InputError(f"{' and '.join(asked)} {verb} with text classification (--task classify), not with "
                         f"--task {getattr(trainable, 'cli_name', config.task)}.")


def interval(config: Any, total: int) -> int:
    """Steps between evaluations (and checkpoints, which must fall on them): --eval-steps, else per epoch."""
    if config.eval_steps > 0:
        return int(config.eval_steps)
    if config.max_steps > 0:
        return max(1, total // EVALS_WITHOUT_EPOCHS)
    return max(1, math.ceil(total / max(1.0, config.epochs) / EVALS_PER_EPOCH))


def arguments(config: Any, trainable: Any, total: int, evaluate: bool) -> dict[str, Any]:
    """TrainingArguments overrides for early stopping (none when it is off or nothing is validated)."""
    if config.early_stopping <= 0 or not evaluate:
        return {}
    name, higher = best_metric(trainable)
    every = interval(config, total)
    return {"eval_strategy": "steps", "eval_steps": every, "save_strategy": "steps", "save_steps": every,
            "load_best_model_at_end": True, "metric_for_best_model": name, "greater_is_better": higher}


def callbacks(config: Any, evaluate: bool) -> list[Any]:
    if config.early_stopping <= 0 or not evaluate:
        return []
    from transformers import EarlyStoppingCallback

    return [EarlyStoppingCallback(early_stopping_patience=int(config.early_stopping))]


def best_event(config: Any, trainable: Any, state: Any, by_user: bool = False) -> TrainingEvent | None:
    """Where the best evaluation was and where the run stopped (None without early stopping).
    `by_user`: Stop (or Ctrl+C) ended it, not the patience."""
    if config.early_stopping <= 0 or state.best_global_step is None:
        return None
    name, _higher = best_metric(trainable)
    best, stopped = int(state.best_global_step), int(state.global_step)
    early = stopped < int(state.max_steps)
    said = f"{name} {state.best_metric:.4f}" if state.best_metric is not None else name
    if by_user:
        end = f"you stopped it at step {stopped}. "
    elif early:
        end = f"stopped at step {stopped} after {config.early_stopping} evaluation(s) without a better one. "
    else:
        end = "the run went to its last step. "
    message = (f"Early stopping: the best validation {said} was at step {best}; " + end
               + f"The model of step {best} is kept.")
    metrics = {"best_step": float(best), "stopped_step": float(stopped)}
    if state.best_metric is not None:
        metrics[f"best_{name}"] = float(state.best_metric)
    return TrainingEvent(BEST_EVENT, step=best, max_steps=int(state.max_steps), metrics=metrics, message=message)

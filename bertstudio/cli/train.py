"""bertstudio train --model SRC --task TASK --train FILE --output DIR [...] [--json]

The options are generated from the fields of `TrainConfig`, `Columns` and `ScratchConfig`
(the Train form is generated from the same fields). With --json, stdout carries one JSON
object per event line ({"event": "step", "step", "loss", "learning_rate", ...}) and ends
with {"event": "result", "output_dir", "metrics"...}. The first Ctrl+C or SIGTERM stops
after the current step and saves what was trained (before the first step it cancels: exit 130);
a second Ctrl+C aborts.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from bertstudio.cli import _train_cv as train_cv
from bertstudio.cli import _train_lora as train_lora
from bertstudio.cli.common import signals_to
from bertstudio.core.json_values import dumps
from bertstudio.core.progress import ProgressEvent, TaskControl


def _add(parser: Any, name: str, option: Any, default: Any, groups: dict[str, Any]) -> None:
    """One argparse option from a field's Option."""
    target = parser
    if option.exclusive:
        if option.exclusive not in groups:
            groups[option.exclusive] = parser.add_mutually_exclusive_group()
        target = groups[option.exclusive]
    kwargs: dict[str, Any] = {"dest": name, "help": option.help}
    if option.widget == "check":
        kwargs["action"] = "store_true"
    else:
        kwargs["type"] = {"int": int, "float": float}.get(option.widget, str)
        if option.choices:
            kwargs["choices"] = option.choices
        kwargs["default"] = None if option.required else default  # required: checked in run (--merge needs none)
        if not option.choices:
            kwargs["metavar"] = option.metavar or {int: "N", float: "X"}.get(kwargs["type"], "NAME")
        if default not in (None, "") and kwargs["type"] is not str and "default" not in option.help:
            kwargs["help"] = f"{option.help} (default {default:g})"
    if name == "task":
        _task_names(kwargs)
    target.add_argument(option.flag, **kwargs)


def _task_names(kwargs: dict[str, Any]) -> None:
    """--task shows the names every other command uses (classify, ner) and takes the long keys too."""
    from bertstudio.core.training.trainable import TRAINABLE

    short = {key: task.cli_name for key, task in TRAINABLE.items()}
    kwargs["type"] = lambda value: short.get(value, value)
    kwargs["choices"] = tuple(short.values())
    longer = [f"{key} for {name}" for key, name in short.items() if key != name]
    kwargs["help"] = f"{kwargs['help']} ({', '.join(longer)} are accepted too)" if longer else kwargs["help"]


def register(subparsers: argparse._SubParsersAction) -> None:
    from bertstudio.core.training.config import TrainConfig
    from bertstudio.core.training.data import Columns
    from bertstudio.core.training.distill_config import DistillConfig
    from bertstudio.core.training.options import options
    from bertstudio.core.training.scratch_config import ScratchConfig
    from bertstudio.core.training.trainable import TRAINABLE

    parser = subparsers.add_parser("train", help="fine-tune or pre-train a model on a data file")
    groups: dict[str, Any] = {}
    for name, option, default in options(TrainConfig):
        _add(parser, name, option, default, groups)
    for name, option, default in options(Columns):
        _add(parser, f"column_{name}", option, default, groups)
    scratch_tasks = " or ".join(key for key, task in TRAINABLE.items() if task.from_scratch)
    scratch = parser.add_argument_group(f"pre-training from scratch (with --task {scratch_tasks} and no --model)")
    scratch.add_argument("--from-scratch", action="store_true", help="new BERT with a WordPiece vocab from --train")
    for name, option, default in options(ScratchConfig):
        _add(scratch, f"scratch_{name}", option, default, groups)
    distill = parser.add_argument_group("distillation (with --task distill)")
    for name, option, default in options(DistillConfig):
        _add(distill, f"distill_{name}", option, default, groups)
    parser.add_argument("--json", action="store_true", help="one JSON object per event on stdout")
    from bertstudio.cli import _train_search as train_search

    train_search.add_arguments(parser)  # --search TRIALS [--search-space FILE]
    train_lora.add_merge(parser)
    train_cv.add_arguments(parser)  # --cv K [--label-issues], --find-lr
    parser.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> Any:
    from bertstudio.core.errors import InputError
    from bertstudio.core.training.config import TrainConfig, task_key
    from bertstudio.core.training.data import Columns
    from bertstudio.core.training.options import options
    from bertstudio.core.training.scratch_config import ScratchConfig
    from bertstudio.core.training.trainable import TRAINABLE

    train_lora.check_required(args, [(name, option.flag or name) for name, option, _d in options(TrainConfig)
                                     if option.required])
    args.task = task_key(args.task)  # `classify` and `text-classification` are one task

    columns = None
    if args.column_text or args.column_label or args.column_text_pair:
        if not (args.column_text and args.column_label):
            raise InputError("Give both --text-column and --label-column (or neither, to detect them).")
        columns = Columns(text=args.column_text, label=args.column_label, text_pair=args.column_text_pair)
    scratch = None
    if args.from_scratch:
        trainable = TRAINABLE.get(args.task)
        if trainable is None or not trainable.from_scratch or args.model:
            scratch_tasks = " or ".join(key for key, task in TRAINABLE.items() if task.from_scratch)
            raise InputError(f"--from-scratch goes with --task {scratch_tasks} and no --model.")
        scratch = ScratchConfig(max_length=args.max_length,
                                **{name: getattr(args, f"scratch_{name}") for name, _o, _d in options(ScratchConfig)})
    distill = distill_config(args)
    values = {name: getattr(args, name) for name, _option, _default in options(TrainConfig)}
    values["epochs"] = values["epochs"] if values["epochs"] is not None else 3.0
    values["model"] = values["model"] or ""
    return TrainConfig(columns=columns, scratch=scratch, distill=distill, **values)


def distill_config(args: argparse.Namespace) -> Any:
    """The distillation settings where the task distils (it has a teacher); --teacher elsewhere is refused."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.training.distill_config import DistillConfig
    from bertstudio.core.training.options import options
    from bertstudio.core.training.trainable import TRAINABLE

    distils = [key for key, task in TRAINABLE.items() if getattr(task, "distils", False)]
    if args.task not in distils:
        if args.distill_teacher or args.distill_student_layers:
            raise InputError(f"--teacher and --student-layers go with --task {' or '.join(distils)}.")
        return None
    return DistillConfig(**{name: getattr(args, f"distill_{name}") for name, _o, _d in options(DistillConfig)})


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.training.engine import train
    from bertstudio.core.training.events import Preparing, TrainingEvent, describe

    if args.merge:
        return train_lora.merge(args)
    config = config_from_args(args)
    config.validate()  # bad settings are refused before anything is loaded
    if train_cv.wanted(args):
        return train_cv.run(args, config)
    if getattr(args, "search", None) is not None:  # --search 0 is refused there, never a silent single run
        from bertstudio.cli import _train_search as train_search

        return train_search.run(args, config)
    stop = threading.Event()
    planned = threading.Event()  # the plan is out: a stop now ends a step (before it, Ctrl+C cancels)
    main_rank = os.environ.get("RANK", "0") == "0"

    def show(event: ProgressEvent) -> None:
        payload = event.payload
        if isinstance(payload, Preparing) and main_rank:  # under torchrun each process tokenizes: rank 0 says so
            print(dumps(payload.to_json()) if args.json else payload.message,
                  file=sys.stdout if args.json else sys.stderr, flush=True)
        if isinstance(payload, TrainingEvent):
            if payload.kind == "plan":
                planned.set()
            if args.json:
                print(dumps(payload.to_json()), flush=True)
            else:
                print(describe(payload, full=True), file=sys.stderr, flush=True)

    control = TaskControl(on_progress=show)

    def on_signal(signum: int, _frame: Any) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        name = "Ctrl+C" if signum == signal.SIGINT else signal.Signals(signum).name
        doing = "stopping after this step and saving…" if planned.is_set() else "cancelling…"
        print(f"{name}: {doing} (Ctrl+C again to abort)", file=sys.stderr, flush=True)
        stop.set()
        control.request_stop()  # before the first step (reading, loading, tokenizing): cancel right away

    with signals_to(on_signal):
        result = train(config, control, stop_event=stop)
    if os.environ.get("RANK", "0") != "0":
        return 0  # under torchrun, rank 0 alone reports
    if args.json:
        print(dumps(result.to_json()), flush=True)
    else:
        state = "stopped early" if result.stopped else "finished"
        print(f"{state} at step {result.step}/{result.max_steps}; saved to {result.output_dir}")
        for key, value in result.metrics.items():
            print(f"  {key}: {value:.4f}")
        if result.checkpoints_dir:
            print(f"  resumable checkpoint kept in {result.checkpoints_dir} (continue with --resume)")
    return 0

"""bertstudio train ... --search TRIALS [--search-space FILE] [--search-metric NAME] [--json]

A hyperparameter search (core/training/search.py) from the same options as one run: each trial
is a run with the space's settings. Human output: one line per evaluation and per finished trial,
then the best trial. With --json: the trial's training events carry "trial": N, one
{"event": "trial", ...} per trial as it ends, and a closing {"event": "search", ...}.
The first Ctrl+C or SIGTERM stops the running trial and keeps the finished ones.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from bertstudio.cli.common import signals_to
from bertstudio.core.json_values import dumps
from bertstudio.core.progress import ProgressEvent, TaskControl


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("hyperparameter search (Optuna)")
    group.add_argument("--search", type=int, metavar="TRIALS", default=None,
                       help="run TRIALS trials of a seeded Optuna search; the best trial's model goes to --output, "
                            "every finished trial to --output/trials")
    group.add_argument("--search-space", metavar="FILE", default="",
                       help="JSON ranges for learning_rate, batch_size, warmup_ratio, epochs, weight_decay, "
                            "lora_rank (default: sensible fine-tuning ranges)")
    group.add_argument("--search-metric", metavar="NAME", default="",
                       help="validation metric compared (e.g. accuracy; default: the space file's, else loss)")


def run(args: argparse.Namespace, config: Any) -> int:
    from dataclasses import replace

    from bertstudio.core.errors import InputError
    from bertstudio.core.training.events import describe
    from bertstudio.core.training.search import SearchResult, TrialProgress, TrialRecord, describe_trial, search
    from bertstudio.core.training.search_space import default_space, read_space

    if args.search < 1:
        raise InputError(f"--search takes a number of trials of 1 or more, not {args.search}.")
    config.validate()
    space = read_space(args.search_space, config) if args.search_space else default_space(config)
    if args.search_metric:
        space = replace(space, metric=args.search_metric.removeprefix("eval_"))
    stop = threading.Event()

    def show(event: ProgressEvent) -> None:
        payload = event.payload
        if isinstance(payload, TrialProgress):
            if args.json:
                print(dumps({**payload.event.to_json(), "trial": payload.trial}), flush=True)
            elif payload.event.kind == "eval":
                print(f"trial {payload.trial + 1} {describe(payload.event, full=True)}", file=sys.stderr, flush=True)
        elif isinstance(payload, TrialRecord):
            if args.json:
                print(dumps(payload.to_json()), flush=True)
            else:
                print(describe_trial(payload, space.metric), file=sys.stderr, flush=True)
        elif payload is None and not args.json and event.message.startswith("Trial ") and " of " in event.message:
            print(event.message, file=sys.stderr, flush=True)

    control = TaskControl(on_progress=show)

    def on_signal(signum: int, _frame: Any) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        print("Stopping the running trial; the finished ones are kept… (Ctrl+C again to abort)",
              file=sys.stderr, flush=True)
        stop.set()

    with signals_to(on_signal):
        result: SearchResult = search(config, args.search, space, control, stop_event=stop)
    if args.json:
        print(dumps(result.to_json()), flush=True)
    if result.best is None and result.stopped:  # the user's Ctrl+C: said as stopped, not as a failure
        print("stopped: no trial finished, so no model was saved.", file=sys.stderr, flush=True)
        return 130
    if result.best is None:
        raise InputError(f"No trial finished{' (stopped)' if result.stopped else ''}, so no model was saved.",
                         hint="The trials' messages above say why; try a narrower learning-rate range.")
    if not args.json:
        _print_best(result)
    return 0


def _print_best(result: Any) -> None:
    best = result.best
    finished = sum(t.state == "finished" for t in result.trials)
    print(f"{'stopped' if result.stopped else 'finished'}: {finished} of {len(result.trials)} trials finished; "
          f"best trial {best.number + 1}, {result.metric} {best.value:.4f}, saved to {result.output_dir}")
    for key, value in best.params.items():
        print(f"  {key}: {value:g}")
    if result.importance:
        print("  importance: " + ", ".join(f"{k} {v:.2f}" for k, v in result.importance.items()))

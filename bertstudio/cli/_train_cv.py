"""bertstudio train ... --cv K [--label-issues] | --find-lr [--json]

--cv K: k-fold cross-validation (core/curation/crossval.py): per-fold and mean +- sd metrics, and
--output/oof.csv with every training row's out-of-fold probabilities; --label-issues then lists the
rows cleanlab flags in them (as `bertstudio label-issues` would). --find-lr: the learning-rate range
test (core/training/find_lr.py); nothing is saved. With --json, stdout carries one JSON object per
line: the folds' training events (with "fold") and {"event": "fold"}s, then {"event": "cv", ...}
(with "issues" under --label-issues); or {"event": "find_lr", ...}.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.core.json_values import dumps
from bertstudio.core.progress import ProgressEvent, TaskControl


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cross-validation and the learning-rate finder")
    group.add_argument("--cv", type=int, metavar="K", default=None,
                       help="stratified K-fold cross-validation (seeded by --seed); writes --output/oof.csv")
    group.add_argument("--label-issues", action="store_true",
                       help="with --cv: list the rows whose label looks wrong (cleanlab, on the OOF probabilities)")
    group.add_argument("--find-lr", action="store_true",
                       help="sweep the learning rate from 1e-7 to 1 and suggest one (saves nothing)")


def wanted(args: argparse.Namespace) -> bool:
    """Whether this module runs the command instead of one training run."""
    from bertstudio.core.errors import InputError

    if args.label_issues and args.cv is None:
        raise InputError("--label-issues goes with --cv K (or use `bertstudio label-issues`).")
    if args.find_lr and (args.cv is not None or bool(getattr(args, "search", 0))):
        raise InputError("--find-lr runs alone: leave out --cv and --search.")
    if args.cv is not None and bool(getattr(args, "search", 0)):
        raise InputError("--cv and --search cannot be combined.")
    return args.cv is not None or bool(args.find_lr)


def run(args: argparse.Namespace, config: Any) -> int:
    if args.find_lr:
        return _find_lr(args, config)
    return _cross_validate(args, config)


def _printer(args: argparse.Namespace) -> TaskControl:
    """Fold-tagged events on stdout (--json) or one line per evaluation and fold on stderr."""
    from bertstudio.core.curation.crossval import FoldResult
    from bertstudio.core.training.events import TrainingEvent

    fold = [0]

    def show(event: ProgressEvent) -> None:
        payload = event.payload
        if event.message.startswith("Fold ") and payload is None:
            fold[0] = int(event.message.split()[1])
            if not args.json:
                print(event.message, file=sys.stderr, flush=True)
        elif isinstance(payload, FoldResult):
            if args.json:
                print(dumps(payload.to_json()), flush=True)
            else:
                print(event.message, file=sys.stderr, flush=True)
        elif isinstance(payload, TrainingEvent) and args.json:
            print(dumps({**payload.to_json(), "fold": fold[0]}), flush=True)

    return TaskControl(on_progress=show)


def _cross_validate(args: argparse.Namespace, config: Any) -> int:
    from bertstudio.core.curation.crossval import cross_validate
    from bertstudio.core.curation.cv_card import write_cv_card
    from bertstudio.core.curation.label_issues import find_issues
    from bertstudio.core.curation.oof import read_oof
    from bertstudio.core.training.data import read_labelled

    result = cross_validate(config, args.cv, _printer(args))
    issues = []
    if args.label_issues:
        oof = read_oof(result.oof_file)
        issues = find_issues(oof.given, oof.probabilities, oof.classes, config.multi_label)
        write_cv_card(config, read_labelled(config.train_file, config.columns, multi_label=config.multi_label),
                      oof.classes, result, issues)
    if args.json:
        extra = {"issues": [issue.to_json() for issue in issues]} if args.label_issues else {}
        print(dumps({**result.to_json(), **extra}), flush=True)
        return 0
    print(f"{len(result.folds)}-fold cross-validation; out-of-fold probabilities in {result.oof_file}")
    for name, mean in result.mean.items():
        folds = ", ".join(f"{fold.metrics[name]:.4f}" for fold in result.folds)
        print(f"  {name}: {mean:.4f} +- {result.sd[name]:.4f}  (folds: {folds})")
    if args.label_issues:
        from bertstudio.cli.label_issues import print_issues

        print_issues(issues)
    return 0


def _find_lr(args: argparse.Namespace, config: Any) -> int:
    from bertstudio.cli.common import stderr_control
    from bertstudio.cli.task_command import clear_progress_line
    from bertstudio.core.training.find_lr import find_lr

    result = find_lr(config, stderr_control())
    clear_progress_line()
    if args.json:
        print(dumps(result.to_json()), flush=True)
        return 0
    print(f"swept {len(result.learning_rates)} learning rates from {result.learning_rates[0]:.3g} to "
          f"{result.learning_rates[-1]:.3g} ({result.stopped_because})")
    for lr, loss, smoothed in zip(result.learning_rates, result.losses, result.smoothed, strict=True):
        print(f"  lr {lr:.3g}  loss {loss:.4f}  smoothed {smoothed:.4f}")
    if result.suggested is None:
        print("no suggestion: the loss never fell; check the data and labels")
    else:
        print(f"suggested learning rate: {result.suggested:.3g} (steepest descent of the smoothed loss)")
    return 0

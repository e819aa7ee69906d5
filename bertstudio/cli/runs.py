"""bertstudio runs [--json] [--runs-dir DIR]: the recorded training runs, newest first."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bertstudio.cli.common import print_listing

MAIN_METRICS = ("accuracy", "f1", "exact_match", "pearson", "spearman", "loss")  # the first found is shown


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction (no public name)
    parser = subparsers.add_parser("runs", help="list the recorded training runs (config, data, metrics, folder)")
    parser.add_argument("--runs-dir", dest="runs_dir", metavar="DIR",
                        help="the runs index folder (default: BERTSTUDIO_RUNS_DIR, else "
                             "$XDG_STATE_HOME/bertstudio/runs)")
    parser.add_argument("--json", action="store_true", help="one JSON list of the runs (without their curves)")
    parser.set_defaults(func=run)


def main_metric(metrics: dict[str, float]) -> str:
    """The run's headline validation score ("eval accuracy 0.8125"), else its last training loss."""
    for name in MAIN_METRICS:
        if f"eval_{name}" in metrics:
            return f"eval {name} {metrics[f'eval_{name}']:.4f}"
    return f"train loss {metrics['train_loss']:.4f}" if "train_loss" in metrics else "no metrics"


def duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.errors import InputError
    from bertstudio.core.runs import index

    folder = Path(args.runs_dir).expanduser() if args.runs_dir else index.runs_dir()
    if args.runs_dir and not folder.is_dir():
        raise InputError(f"The runs folder '{folder}' does not exist or is not a folder.",
                         hint="Pass the folder the runs index is in, or leave --runs-dir out.")
    runs = index.list_runs(folder)
    return print_listing(runs, lambda r: r.summary_json(), args.json, f"No training runs recorded in {folder}.",
                         _line)


def _line(r: Any) -> str:
    steps = f"step {r.step}/{r.max_steps}" if r.max_steps else "no steps"
    what = r.error if r.status == "failed" else main_metric(r.metrics)
    return (f"{r.id}  {r.status:<8} {r.task:<22} {duration(r.duration_seconds):>7} {r.device:<7} {steps:<15} "
            f"{what}  {r.output_dir}")

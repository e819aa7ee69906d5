"""bertstudio models --models-dir DIR [--json]: local models, architecture and supported tasks.

Judged from config.json and the safetensors header: neither torch nor transformers is imported."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.cli.common import print_listing


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("models", help="list local model folders and the tasks their weights support")
    parser.add_argument("--models-dir", dest="models_dir_sub", metavar="DIR",
                        help="folder of model folders (default: BERTSTUDIO_MODELS_DIR)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.catalog import list_local_models, models_dir_from_env
    from bertstudio.core.errors import InputError

    folder = models_dir_from_env(args.models_dir_sub or args.models_dir)
    if folder is None:
        raise InputError("No models folder given.", hint="Pass --models-dir DIR or set BERTSTUDIO_MODELS_DIR.")
    models = list_local_models(folder)
    if models.note:
        print(f"note: {models.note}", file=sys.stderr)
    return print_listing(models, lambda m: m.to_json(), args.json,
                         f"No model folders (with a config.json) in {folder}.", _line)


def _line(model: Any) -> str:
    tasks = ", ".join(model.tasks) or "no tasks"
    why = f": {model.problem}" if model.problem and not model.tasks else (
        f"  ! {model.problem}" if model.problem else "")
    note = f"  (note: {model.note})" if model.note else ""
    return f"{model.name:<40} {model.architecture:<34} {tasks}{why}{note}"

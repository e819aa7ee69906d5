"""Headless subcommands over the same core as the window. Errors: stderr + non-zero exit."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from pathlib import Path

from bertstudio import __version__


def command_modules() -> list[str]:
    """Every module of this package but the shared ones is a subcommand: a task command declares
    `COMMAND` (run by cli.runner); any other has its own register(subparsers)."""
    names = [m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])]
    return sorted(name for name in names if name not in {"common", "runner"} and not name.startswith("_"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bertstudio",
        description="Explore BERT-family models. Without a subcommand, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"bertstudio {__version__}")
    parser.add_argument("--models-dir", help="folder of local model folders (or BERTSTUDIO_MODELS_DIR)")
    subparsers = parser.add_subparsers(dest="command", metavar="<command>")
    from bertstudio.cli.runner import register_command

    for name in command_modules():
        module = importlib.import_module(f"bertstudio.cli.{name}")
        if hasattr(module, "COMMAND"):
            register_command(subparsers, module.COMMAND)
        else:
            module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = build_parser().parse_args(argv)
    if args.command is None:
        from bertstudio.app import run_app

        return run_app(models_dir=args.models_dir)
    from bertstudio.core.errors import BertStudioError

    try:
        return int(args.func(args) or 0)
    except BertStudioError as error:
        print(f"error: {error.message}", file=sys.stderr)
        if error.hint:
            print(f"hint: {error.hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

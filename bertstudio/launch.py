"""The `bertstudio` command: the window without a subcommand, the headless CLI with one.

Kept apart from `bertstudio.cli`, so that the CLI never imports Qt (an import-linter contract).
"""

from __future__ import annotations


def open_window(models_dir: str | None) -> int:
    from bertstudio.app import run_app

    return run_app(models_dir=models_dir)


def main(argv: list[str] | None = None) -> int:
    from bertstudio.cli import main as cli_main

    return cli_main(argv, open_window=open_window)

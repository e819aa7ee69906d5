"""Headless subcommands over the same core as the window. Errors: stderr + non-zero exit."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bertstudio import __version__


def command_modules() -> list[str]:
    """Every module of this package but the shared ones is a subcommand: a task command declares
    `COMMAND` (run by cli.task_command); any other has its own register(subparsers)."""
    names = [m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])]
    return sorted(name for name in names if name not in {"common", "task_command"} and not name.startswith("_"))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command`, only that subcommand's module is imported and registered (a
    one-text `classify` then imports none of the other 22 command modules: 0.14 s of a whole process,
    bench/bench_whole_process.py). An unknown name, or a module that registers another name (`select`),
    gets the whole parser, so argparse lists every choice."""
    parser, subparsers = _root_parser()
    names = command_modules()
    guess = command.replace("-", "_") if command else None
    if guess in names:
        _register(subparsers, guess)
        if command in subparsers.choices:
            return parser
        parser, subparsers = _root_parser()
    for name in names:
        _register(subparsers, name)
    return parser


MODELS_DIR = "--models-dir"  # the one option before a command that takes a value (command_of skips it)


def _root_parser() -> tuple[argparse.ArgumentParser, Any]:
    parser = argparse.ArgumentParser(
        prog="bertstudio",
        description="Explore BERT-family models. Without a subcommand, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"bertstudio {__version__}")
    parser.add_argument(MODELS_DIR, help="folder of local model folders (or BERTSTUDIO_MODELS_DIR)")
    return parser, parser.add_subparsers(dest="command", metavar="<command>")


def _register(subparsers: Any, name: str) -> None:
    from bertstudio.cli.task_command import register_command

    module = importlib.import_module(f"bertstudio.cli.{name}")
    if hasattr(module, "COMMAND"):
        register_command(subparsers, module.COMMAND)
    else:
        module.register(subparsers)


def command_of(argv: list[str]) -> str | None:
    """The subcommand named on the line (the first word that is not an option or --models-dir's value);
    None where the whole parser must answer: `bertstudio --help classify` lists every command."""
    skip = False
    for item in argv:
        if skip:
            skip = False
            continue
        name, equals, _ = item.partition("=")
        if len(name) > 2 and MODELS_DIR.startswith(name):  # argparse takes `--models DIR` too
            skip = not equals
        elif item in ("--", "-h", "--help"):
            return None
        elif not item.startswith("-"):
            return item
    return None


# Arguments that name files or folders: any bytes are fine there (Linux paths need not be UTF-8).
PATH_ARGUMENTS = frozenset({"model", "compare", "out", "file", "context_file", "train", "eval", "output",
                            "models_dir", "models_dir_sub", "corpus", "suite", "failures", "runs_dir",
                            "sae", "concept", "data", "tuned_lens", "pool", "probabilities"})


def _not_utf8(args: argparse.Namespace) -> tuple[str, str] | None:
    """The first text argument holding bytes that are not UTF-8 (Python keeps them as lone surrogates)."""
    for name, value in vars(args).items():
        if name in PATH_ARGUMENTS or name == "func":
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and any("\udc80" <= ch <= "\udcff" for ch in item):
                return name, item
    return None


def _swallowed_value(argv: list[str]) -> str:
    """The option written `--name=--` before any bare `--`, or "": argparse drops that '--' and hands the
    command an empty list where it expects one value (an internal error later on)."""
    for item in argv:
        if item == "--":
            break
        name, equals, value = item.partition("=")
        if equals and value == "--" and name.startswith("--"):
            return name
    return ""


def crash_dir() -> Path:
    """Where crash logs go: $XDG_STATE_HOME/bertstudio/crashes (default ~/.local/state/...)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "bertstudio" / "crashes"


def write_crash_log(error: BaseException, argv: list[str]) -> Path | None:
    """The full traceback in a file of its own; None if even that cannot be written."""
    import time
    import traceback

    try:
        folder = crash_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        text = (f"bertstudio {__version__}, Python {sys.version.split()[0]}\n"
                f"argv: {argv!r}\n\n" + "".join(traceback.format_exception(error)))
        path.write_text(text, encoding="utf-8", errors="backslashreplace")
        return path
    except OSError:
        return None


def _user_error(error: Exception) -> int:
    message = getattr(error, "message", None) or str(error)
    print(f"error: {message}", file=sys.stderr)
    hint = getattr(error, "hint", "")
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    return 1


def _cancelled() -> int:
    """Ctrl+C: one word, exit 130; a second Ctrl+C while we say it cannot print a traceback."""
    import signal

    from bertstudio.cli.common import signals_to

    with signals_to(signal.SIG_IGN, (signal.SIGINT,)):
        print("Cancelled.", file=sys.stderr, flush=True)
    return 130


def main(argv: list[str] | None = None, open_window: Callable[[str | None], int] | None = None) -> int:
    """Exit codes: 0 done, 1 a user error (one message, no traceback), 2 a usage error or a bug
    (one line and the path of a crash log with the traceback), 130 cancelled (Ctrl+C: "Cancelled.").

    Without a subcommand, `open_window(models_dir)` (bertstudio.launch passes the app's: this
    package never imports Qt); with none given, the help."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        swallowed = _swallowed_value(argv)
        args = build_parser(command_of(argv)).parse_args(argv)
        if args.command is None:
            if open_window is None:
                build_parser().print_help()
                return 2
            return open_window(args.models_dir)
        from bertstudio.core.errors import BertStudioError, InputError, TaskCancelled

        try:
            if swallowed:
                raise InputError(f"{swallowed}=-- gives {swallowed} no value: '--' ends the options.",
                                 hint=f"Give {swallowed} a value of its own (a path like ./--).")
            bad = _not_utf8(args)
            if bad is not None:
                shown = bad[1].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                raise InputError(f"The {bad[0].replace('_', ' ')} argument is not valid UTF-8 text: '{shown}'.",
                                 hint="Save or type the text as UTF-8 (or pass it in a UTF-8 file).")
            return int(args.func(args) or 0)
        except TaskCancelled:
            return _cancelled()
        except BertStudioError as error:
            return _user_error(error)
    except KeyboardInterrupt:
        return _cancelled()
    except BrokenPipeError:  # `bertstudio ... | head`: the reader left, nothing more to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 0
    except OSError as error:  # the machine said no (permissions, disk full, a vanished file): not a bug
        where = f": {error.filename}" if getattr(error, "filename", None) else ""
        print(f"error: {error.strerror or error}{where}", file=sys.stderr)
        return 1
    except MemoryError:
        print("error: out of memory (try a smaller model, batch or input)", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - a bug: one line and a crash log, not a traceback wall
        path = write_crash_log(error, argv)
        where = f"details in {path}" if path else "the crash log could not be written"
        summary = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        print(f"internal error: {summary} ({where}; please report it)", file=sys.stderr)
        return 2

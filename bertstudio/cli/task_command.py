"""How every task command runs: a command declares its arguments, how they become the
task's inputs, and how a result prints; loading, notes, compare and JSON happen here.

The same `core.jobs.run_spec` serves the tabs, so the CLI and the window cannot drift apart;
`--python` prints the same script as the window's Copy as Python instead of running.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bertstudio.cli._quantize import add_quantize_options, compare_source
from bertstudio.cli.common import add_model_options, add_runtime_option, print_json, stderr_control
from bertstudio.core.quantize import variant_source

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import TaskSpec


@dataclass(frozen=True)
class Command:
    task: str  # the task spec's key
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    inputs: Callable[[argparse.Namespace], Any]  # checked before any model is loaded
    print_result: Callable[[Any], None]
    print_differences: Callable[[Any], None] | None = None  # text mode, after A's and B's results
    differences_title: str = "differences (B - A)"
    description: str | None = None
    # --json of one result (default: jsonable(result)); attention narrows it to --layer/--head.
    json_result: Callable[[Any, argparse.Namespace], Any] | None = None
    # --json of the differences (default: core.jobs.outcome_json's); attention narrows them to --layer/--head.
    json_differences: Callable[[Any, argparse.Namespace], Any] | None = None
    # called with the Outcome before anything is printed (attention writes --out here)
    after_run: Callable[[Any, argparse.Namespace], None] | None = None
    onnx: bool = False  # --runtime onnx: the task runs an exported model (the spec's onnx_runtime)


def register_command(subparsers: argparse._SubParsersAction, command: Command) -> argparse.ArgumentParser:
    from bertstudio.core.tasks.spec import spec_for

    spec = spec_for(command.task)
    parser = subparsers.add_parser(spec.cli_name, help=command.help, description=command.description)
    add_model_options(parser, command.task)
    if command.onnx:
        add_runtime_option(parser)
    command.add_arguments(parser)
    parser.add_argument("--compare", metavar="SRC2", help="a second model to run on the same input and compare")
    add_quantize_options(parser)
    parser.add_argument("--ablate-heads", metavar="L:H[,L:H...]", type=head_list, default=(),
                        help="switch these attention heads off (0-based layer:head) and show that result")
    add_python_option(parser, spec)
    parser.set_defaults(func=lambda args: run_command(command, args))
    return parser


def head_list(text: str) -> tuple[tuple[int, int], ...]:
    """'0:1,2:3' -> ((0, 1), (2, 3)) as the tabs' "Heads off" field reads it; argparse turns the
    error into a usage message (exit 2)."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.heads import parse_heads

    try:
        return parse_heads(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(f"{error.message} {error.hint}".strip()) from error


def add_python_option(parser: argparse.ArgumentParser, spec: TaskSpec) -> None:
    """--python, where the task's spec can write a script (the one Copy as Python writes)."""
    if spec.script is not None:
        parser.add_argument("--python", action="store_true",
                            help="print the transformers script that Copy as Python writes for these "
                                 "arguments, instead of running (no model is loaded)")


def print_python(spec: TaskSpec, args: argparse.Namespace, inputs: Any) -> int:
    """The UI's Copy as Python script for one model and these inputs; nothing is loaded or run."""
    import os

    from bertstudio.core.errors import InputError
    from bertstudio.core.snippets import python_snippet

    unsupported = [option for option, given in (
        ("--compare", args.compare), ("--ablate-heads", args.ablate_heads), ("--json", args.json),
        ("--per-layer", getattr(args, "per_layer", False)), ("--out", getattr(args, "out", None)),
        ("--quantize", args.quantize), ("--runtime onnx", getattr(args, "runtime", "torch") == "onnx"),
    ) if given]
    if unsupported:
        raise InputError(f"--python writes a script for one model's plain result; leave out {unsupported[0]}.")
    print(python_snippet(spec, os.path.expanduser(args.model.strip()), inputs), end="")
    return 0


def print_notes(notes: Any) -> None:
    for note in notes:
        print(f"{note.level}: {note.text}", file=sys.stderr)


def clear_progress_line() -> None:
    """Blank stderr_control's progress line before the result prints (on a terminal only)."""
    if sys.stderr.isatty():
        print("\r" + " " * 100 + "\r", end="", file=sys.stderr)


def print_result(result: Any, as_json: bool, printer: Callable[[Any], None]) -> int:
    """The end of a command: the progress line cleared, the result's notes on stderr, then its JSON
    (`--json`) or `printer`'s text on stdout. Returns the exit status (0)."""
    clear_progress_line()
    print_notes(result.notes)
    if as_json:
        print_json(result.to_json())
    else:
        printer(result)
    return 0


def run_command(command: Command, args: argparse.Namespace) -> int:
    from bertstudio.core.jobs import outcome_json, run_spec
    from bertstudio.core.models import LoadRequest
    from bertstudio.core.tasks.spec import spec_for

    spec = spec_for(command.task)
    inputs = command.inputs(args)
    if getattr(args, "python", False):
        return print_python(spec, args, inputs)
    compare = compare_source(args)  # "SRC [int8]" with --compare-quantize
    model = variant_source(args.model, args.quantize)
    request = LoadRequest(args.model, spec.key, args.device, args.dtype, spec.attn_implementation, args.quantize,
                          getattr(args, "runtime", "torch"))
    outcome = run_spec(spec, request, inputs, stderr_control(), compare, args.ablate_heads)
    clear_progress_line()
    print_notes(outcome.notes)
    if command.after_run is not None:
        command.after_run(outcome, args)
    if args.json:  # the same form File → Export result… writes (core.jobs.outcome_json)
        json_result, json_differences = command.json_result, command.json_differences
        print_json(outcome_json(
            model, outcome,
            (lambda result: json_result(result, args)) if json_result else None,
            (lambda outcome: json_differences(outcome.diff, args)) if json_differences else None,
        ))
        return 0
    if outcome.second is None:
        command.print_result(outcome.result)
        return 0
    print(f"A: {model}")
    command.print_result(outcome.result)
    print(f"\nB: {compare}")
    command.print_result(outcome.second)
    if command.print_differences is not None:
        print(f"\n{command.differences_title}:")
        command.print_differences(outcome.diff)
    return 0

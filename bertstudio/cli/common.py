"""Options and output shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from bertstudio.core.progress import ProgressEvent, TaskControl


def add_model_options(parser: argparse.ArgumentParser, task: str, required: bool = True) -> None:
    from bertstudio.core.tasks.spec import spec_for

    parser.add_argument(
        "--model", required=required, metavar="SRC",
        help=f"Hub id or local folder (online default for this task: {spec_for(task).default_model})",
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"],
                        help="number format; half precision on GPUs only")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")


def stderr_control() -> TaskControl:
    """Progress goes to stderr so stdout stays pure (JSON)."""
    last = [""]

    def show(event: ProgressEvent) -> None:
        if event.message != last[0] and sys.stderr.isatty():
            print(f"\r{event.message[:100]:<100}", end="", file=sys.stderr, flush=True)
        last[0] = event.message

    return TaskControl(on_progress=show)


def load_for(args: argparse.Namespace, task: str, attn_implementation: str | None = None) -> Any:
    """Load args.model for `task`; the head report goes to stderr as a warning."""
    from bertstudio.core.models import LoadRequest, load_model

    request = LoadRequest(args.model, task, args.device, args.dtype, attn_implementation)
    loaded = load_model(request, stderr_control())
    if sys.stderr.isatty():
        print("\r" + " " * 100 + "\r", end="", file=sys.stderr)
    if loaded.info.head_warning:
        print(f"warning: {loaded.info.head_warning}", file=sys.stderr)
    return loaded


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def show_result(args: argparse.Namespace, result: Any, print_result: Callable[[Any], None]) -> int:
    """One model's result: JSON with --json, else as text. Returns the exit code (0)."""
    if args.json:
        print_json(result.to_json())
    else:
        print_result(result)
    return 0


def load_second(args: argparse.Namespace, task: str, attn_implementation: str | None = None) -> Any:
    """The --compare model, loaded like the first (same device, dtype, warnings)."""
    return load_for(argparse.Namespace(**{**vars(args), "model": args.compare}), task, attn_implementation)


def show_comparison(
    args: argparse.Namespace, result: Any, second: Any, differences: Any, print_result: Callable[[Any], None]
) -> bool:
    """--json: {"model", "result", "compare": {"model", "result", "differences"}} (returns True);
    otherwise A's and B's results as text, leaving the differences to the caller (returns False)."""
    if args.json:
        print_json({"model": args.model, "result": result.to_json(),
                    "compare": {"model": args.compare, "result": second.to_json(), "differences": differences}})
        return True
    print(f"A: {args.model}")
    print_result(result)
    print(f"\nB: {args.compare}")
    print_result(second)
    return False

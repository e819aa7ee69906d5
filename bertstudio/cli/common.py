"""Options and output shared by the subcommands."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from bertstudio.core.json_values import dumps
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


def add_runtime_option(parser: argparse.ArgumentParser) -> None:
    """--runtime: PyTorch, or the model's ONNX export on ONNX Runtime (core/export/onnx_runtime.py)."""
    parser.add_argument("--runtime", choices=("torch", "onnx"), default="torch",
                        help="torch (default), or onnx: run the exported model (an .onnx file, or a folder "
                             "holding model.onnx beside its tokenizer) on ONNX Runtime on the CPU")


def stderr_control() -> TaskControl:
    """Progress goes to stderr so stdout stays pure (JSON)."""
    last = [""]

    def show(event: ProgressEvent) -> None:
        if event.message != last[0] and sys.stderr.isatty():
            print(f"\r{event.message[:100]:<100}", end="", file=sys.stderr, flush=True)
        last[0] = event.message

    return TaskControl(on_progress=show)


@contextlib.contextmanager
def signals_to(handler: Any, signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """`signums` go to `handler` while the block runs (Python sets handlers in the main thread only),
    and back to what they were after."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in signums:
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)


def print_json(value: Any) -> None:
    """Valid JSON on stdout (core.json_values.dumps: a NaN or infinity is null, with a note)."""
    print(dumps(value, indent=2))



def print_listing(items: Any, item_json: Callable[[Any], Any], as_json: bool, empty: str,
                  line: Callable[[Any], str]) -> int:
    """A listing command's output: one JSON list on stdout, or a line an item (`empty` on stderr for none)."""
    if as_json:
        print_json([item_json(item) for item in items])
        return 0
    if not items:
        print(empty, file=sys.stderr)
    for item in items:
        print(line(item))
    return 0


def ranking_differences(first: str = "top") -> Callable[[Any], None]:
    """The printer of a RankingDiff as the ranking commands show it (NSP's candidates, similarity's
    sentences B): whether the first place (named `first`) changed, then each item's change and its
    move in rank. A factory, so a command passes it as its Command's print_differences."""

    def print_differences(diff: Any) -> None:
        if diff.top_changed:
            print(f"  {first} changed: {diff.top_a} -> {diff.top_b}")
        else:
            print(f"  {first} unchanged: {diff.top_a}")
        for d in diff.deltas:
            delta = "" if d.delta is None else f"{d.delta:+.4f}"
            moved = f"  rank {d.rank_a} -> {d.rank_b}" if d.rank_a != d.rank_b else ""
            print(f"  {delta:>8}  {d.label}{moved}")

    return print_differences

"""bertstudio fill-mask --model SRC "text with a mask" [--top-k K] [--compare SRC2] [--json]"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from bertstudio.cli import _per_layer
from bertstudio.cli._inputs import add_parts
from bertstudio.cli.task_command import Command

if TYPE_CHECKING:
    from bertstudio.core.tasks.fill_mask import FillMaskInput


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_parts(parser, "fill-mask")
    parser.add_argument("--top-k", type=int, default=5, help="candidates per mask (default 5)")
    _per_layer.add_option(parser)


def _inputs(args: argparse.Namespace) -> FillMaskInput:
    from bertstudio.core.tasks.fill_mask import FillMaskInput

    _per_layer.remember(args)
    return FillMaskInput(args.text, args.top_k)


def _print(result: Any) -> None:
    print(result.filled_text)
    for number, mask in enumerate(result.masks, start=1):
        print(f"\nmask {number} (characters {mask.start}-{mask.end}):")
        for candidate in mask.candidates:
            print(f"  {candidate.score:7.2%}  {candidate.token:<20} id {candidate.token_id}")
    _per_layer.print_layers(result)


def _print_differences(diffs: Any) -> None:
    for number, diff in enumerate(diffs, start=1):
        top = f"top-1 changed {diff.top_a} -> {diff.top_b}" if diff.top_changed else f"top-1 unchanged ({diff.top_a})"
        print(f"  mask {number}: {top}; largest score change {diff.max_abs_delta:+.4f}")


COMMAND = Command(
    task="fill-mask", help="top-k candidates for each mask token",
    add_arguments=_arguments, inputs=_inputs, print_result=_print, print_differences=_print_differences,
    json_result=_per_layer.json_result,
)

"""bertstudio fill-mask --model SRC "text with a mask" [--top-k K] [--json]"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bertstudio.cli.common import add_model_options, load_for, load_second, show_comparison, show_result

if TYPE_CHECKING:
    from bertstudio.core.tasks.fill_mask import FillMaskResult


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("fill-mask", help="top-k candidates for each mask token")
    add_model_options(parser, "fill-mask")
    parser.add_argument("text", help="text with one or more of the model's mask tokens")
    parser.add_argument("--top-k", type=int, default=5, help="candidates per mask (default 5)")
    parser.add_argument("--compare", metavar="SRC2", help="a second model to run on the same text and compare")
    parser.set_defaults(func=run)


def _print(result: FillMaskResult) -> None:
    print(result.filled_text)
    for number, mask in enumerate(result.masks, start=1):
        print(f"\nmask {number} (characters {mask.start}-{mask.end}):")
        for candidate in mask.candidates:
            print(f"  {candidate.score:7.2%}  {candidate.token:<20} id {candidate.token_id}")


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.tasks.fill_mask import compare, in_mask_of, predict

    loaded = load_for(args, "fill-mask")
    result = predict(loaded, args.text, args.top_k)
    if result.truncation:
        print(f"warning: {result.truncation.message}", file=sys.stderr)
    if not args.compare:
        return show_result(args, result, _print)
    other = load_second(args, "fill-mask")
    second = predict(other, in_mask_of(other, args.text), args.top_k)
    diffs = compare(result, second)
    if show_comparison(args, result, second, [d.to_json() for d in diffs], _print):
        return 0
    print("\ndifferences (B - A):")
    for number, diff in enumerate(diffs, start=1):
        top = f"top-1 changed {diff.top_a} -> {diff.top_b}" if diff.top_changed else f"top-1 unchanged ({diff.top_a})"
        print(f"  mask {number}: {top}; largest score change {diff.max_abs_delta:+.4f}")
    return 0

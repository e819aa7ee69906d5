"""bertstudio fill-mask --model SRC "text with a mask" [--top-k K] [--json]"""

from __future__ import annotations

import argparse
import sys

from bertstudio.cli.common import add_model_options, load_for, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("fill-mask", help="top-k candidates for each mask token")
    add_model_options(parser, "fill-mask")
    parser.add_argument("text", help="text with one or more of the model's mask tokens")
    parser.add_argument("--top-k", type=int, default=5, help="candidates per mask (default 5)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.tasks.fill_mask import predict

    loaded = load_for(args, "fill-mask")
    result = predict(loaded, args.text, args.top_k)
    if result.truncation:
        print(f"warning: {result.truncation.message}", file=sys.stderr)
    if args.json:
        print_json(result.to_json())
        return 0
    print(result.filled_text)
    for number, mask in enumerate(result.masks, start=1):
        print(f"\nmask {number} (characters {mask.start}-{mask.end}):")
        for candidate in mask.candidates:
            print(f"  {candidate.score:7.2%}  {candidate.token:<20} id {candidate.token_id}")
    return 0

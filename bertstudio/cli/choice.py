"""bertstudio choice --model SRC --prompt P --choice A --choice B ... [--compare SRC2] [--json]"""

from __future__ import annotations

import argparse

from bertstudio.cli.common import add_model_options, load_for, load_second, show_comparison, show_result


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("choice", help="multiple choice: the probability of each ending of a prompt")
    add_model_options(parser, "multiple-choice")
    parser.add_argument("--prompt", required=True, metavar="P", help="the context the endings continue")
    parser.add_argument("--choice", action="append", default=[], metavar="ENDING",
                        help="a candidate ending; give it two or more times")
    parser.add_argument("--compare", metavar="SRC2", help="a second model to run on the same input and compare")
    parser.set_defaults(func=run)


def _print(result) -> None:  # noqa: ANN001
    for choice in result.choices:
        print(f"  {choice.score:8.2%}  {choice.choice}")


def run(args: argparse.Namespace) -> int:
    import sys

    from bertstudio.core.tasks.multiple_choice import compare, predict

    loaded = load_for(args, "multiple-choice")
    result = predict(loaded, args.prompt, args.choice)
    if result.truncated:
        print(f"warning: {result.notes[0]}", file=sys.stderr)
    if not args.compare:
        return show_result(args, result, _print)
    other = load_second(args, "multiple-choice")
    second = predict(other, args.prompt, args.choice)
    diff = compare(result, second)
    if show_comparison(args, result, second, diff.to_json(), _print):
        return 0
    top = f"best changed: {diff.top_a} -> {diff.top_b}" if diff.top_changed else f"best unchanged: {diff.top_a}"
    print(f"\n{top}; largest score change {diff.max_abs_delta:+.4f}")
    return 0

"""bertstudio ner --model SRC "text" [--aggregation simple] [--json]"""

from __future__ import annotations

import argparse
import sys

from bertstudio.cli.common import add_model_options, load_for, print_json

STRATEGIES = ("none", "simple", "first", "average", "max")  # as core.tasks.ner, without importing torch


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ner", help="named-entity tagging (token classification)")
    add_model_options(parser, "ner")
    parser.add_argument("text", help="the text to tag")
    parser.add_argument("--aggregation", default="simple", choices=STRATEGIES,
                        help="how wordpieces are grouped into entities (default: simple)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.tasks.ner import tag

    loaded = load_for(args, "ner")
    result = tag(loaded, args.text, args.aggregation)
    for note in (result.truncation.message if result.truncation else "", result.label_hint, *result.notes):
        if note:
            print(f"warning: {note}", file=sys.stderr)
    if args.json:
        print_json(result.to_json())
        return 0
    if not result.entities:
        print("no entities")
    for e in result.entities:
        print(f"{e.score:7.2%}  {e.label:<10} {e.start}-{e.end}  {e.word}")
    return 0

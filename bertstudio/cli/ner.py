"""bertstudio ner --model SRC "text" [--aggregation simple] [--compare SRC2] [--json]

--compare runs a second model on the same text and adds its entities and the differences
(entities matched by character span: same, relabelled, removed (only A), added (only B)).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.cli.common import add_model_options, load_for, load_second, show_comparison, show_result

STRATEGIES = ("none", "simple", "first", "average", "max")  # as core.tasks.ner, without importing torch


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ner", help="named-entity tagging (token classification)")
    add_model_options(parser, "ner")
    parser.add_argument("text", help="the text to tag")
    parser.add_argument("--aggregation", default="simple", choices=STRATEGIES,
                        help="how wordpieces are grouped into entities (default: simple)")
    parser.add_argument("--compare", metavar="SRC2", help="a second NER model to run on the same text and compare")
    parser.set_defaults(func=run)


def _tag(loaded: Any, args: argparse.Namespace, prefix: str = "") -> Any:
    from bertstudio.core.tasks.ner import tag

    result = tag(loaded, args.text, args.aggregation, views=False)
    for note in (result.truncation.message if result.truncation else "", result.label_hint, *result.notes):
        if note:
            print(f"warning: {prefix}{note}", file=sys.stderr)
    return result


def _print(result: Any) -> None:
    if not result.entities:
        print("no entities")
    for e in result.entities:
        print(f"{e.score:7.2%}  {e.label:<10} {e.start}-{e.end}  {e.word}")


def run(args: argparse.Namespace) -> int:
    loaded = load_for(args, "ner")
    result = _tag(loaded, args)
    if not args.compare:
        return show_result(args, result, _print)
    other = load_second(args, "ner")
    second = _tag(other, args, "B: ")
    from bertstudio.core.tasks.ner import compare

    diff = compare(result.entities, second.entities)
    if show_comparison(args, result, second, diff.to_json(), _print):
        return 0
    print(f"\ndifferences (A -> B): {len(diff.same)} same")
    for a, b in diff.relabelled:
        print(f"  relabelled  {a.start}-{a.end}  {a.text}: {a.label} -> {b.label}")
    for e in diff.removed:
        print(f"  removed     {e.start}-{e.end}  {e.text} ({e.label}, only in A)")
    for e in diff.added:
        print(f"  added       {e.start}-{e.end}  {e.text} ({e.label}, only in B)")
    return 0

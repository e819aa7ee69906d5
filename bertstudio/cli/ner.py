"""bertstudio ner --model SRC "text" [--aggregation first] [--compare SRC2] [--json]

--compare runs a second model on the same text and adds its entities and the differences
(entities matched by character span: same, relabelled, removed (only A), added (only B)).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bertstudio.cli._inputs import add_parts
from bertstudio.cli.task_command import Command

if TYPE_CHECKING:
    from bertstudio.core.tasks.ner import NerInput, NerResult
    from bertstudio.core.tasks.ner.entities import EntityDiff

STRATEGIES = ("none", "simple", "first", "average", "max")  # as core.tasks.ner, without importing torch
DEFAULT_STRATEGY = "first"  # core.tasks.ner.DEFAULT_STRATEGY: whole words, not wordpieces


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_parts(parser, "ner")
    parser.add_argument("--aggregation", default=DEFAULT_STRATEGY, choices=STRATEGIES,
                        help=f"how wordpieces are grouped into entities (default: {DEFAULT_STRATEGY}: a word takes "
                             "its first wordpiece's label; simple: adjacent wordpieces of one type; none: each "
                             "wordpiece)")


def _inputs(args: argparse.Namespace) -> NerInput:
    from bertstudio.core.tasks.ner import NerInput

    return NerInput(args.text, args.aggregation, views=False)  # the tab-only views are skipped


def _print(result: NerResult) -> None:
    if not result.entities:
        print("no entities")
    for e in result.entities:
        print(f"{e.score:7.2%}  {e.label:<10} {e.start}-{e.end}  {e.word}")


def _print_differences(diff: EntityDiff) -> None:
    print(f"  {len(diff.same)} same")
    for a, b in diff.relabelled:
        print(f"  relabelled  {a.start}-{a.end}  {a.text}: {a.label} -> {b.label}")
    for e in diff.removed:
        print(f"  removed     {e.start}-{e.end}  {e.text} ({e.label}, only in A)")
    for e in diff.added:
        print(f"  added       {e.start}-{e.end}  {e.text} ({e.label}, only in B)")


COMMAND = Command(
    task="ner", help="named-entity tagging (token classification)",
    add_arguments=_arguments, inputs=_inputs, print_result=_print, print_differences=_print_differences,
    differences_title="differences (A -> B)", onnx=True,
)

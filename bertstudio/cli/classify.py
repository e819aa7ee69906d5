"""bertstudio classify --model SRC "text" [--pair B] [--file F [--column C]] [--compare SRC2] [--json]"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from bertstudio.cli._inputs import add_parts
from bertstudio.cli.task_command import Command

if TYPE_CHECKING:
    from bertstudio.core.compare import RankingDiff
    from bertstudio.core.tasks.classification import ClassificationBatchInput, ClassificationInput, ClassificationResult


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_parts(parser, "classification")
    parser.add_argument("--file", metavar="F", help="CSV/TSV (or .txt, one text per line) to classify row by row")
    parser.add_argument("--column", metavar="C", help="column of --file holding the texts (default: 'text' or first)")


def _inputs(args: argparse.Namespace) -> ClassificationInput | ClassificationBatchInput:
    """The file is read here, before any model is loaded: a bad file fails at once."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.tasks.classification import ClassificationBatchInput, ClassificationInput, texts_of_file

    if args.file is None:
        if args.text is None:
            raise InputError("Nothing to classify.", hint='Give a text ("...") or --file F.')
        return ClassificationInput(args.text, args.pair)
    if args.text is not None or args.pair is not None:
        raise InputError("Give either a text (with --pair) or --file, not both.")
    return ClassificationBatchInput(tuple(texts_of_file(args.file, args.column)))


def _print(result: ClassificationResult) -> None:
    if result.kind == "regression":
        print("value (regression head)")
    for number, row in enumerate(result.rows, start=1):
        if result.batch:
            print(f"\n{number}. {row.text[:80]}")
        for score in row.scores[:5] if result.batch else row.scores:
            value = f"{score.score:9.4f}" if result.kind == "regression" else f"{score.score:8.2%}"
            print(f"  {value}  {score.label}")


def _print_differences(diffs: tuple[RankingDiff, ...]) -> None:
    for number, diff in enumerate(diffs, start=1):
        prefix = f"{number}. " if len(diffs) > 1 else ""
        top = f"top changed {diff.top_a} -> {diff.top_b}" if diff.top_changed else f"top unchanged ({diff.top_a})"
        if diff.labels_note:
            top = f"A's top {diff.top_a}, B's top {diff.top_b}: {diff.labels_note}"
        print(f"  {prefix}{top}; largest score change {diff.max_abs_delta:+.4f}")


def _json_differences(diffs: tuple[RankingDiff, ...], args: argparse.Namespace) -> Any:
    """A batch: one difference per row; one text (or pair): that row's difference itself."""
    rows = [diff.to_json() for diff in diffs]
    return rows if args.file is not None else rows[0]


COMMAND = Command(
    task="classification", help="every label's score for a text, a text pair, or a CSV/TSV",
    add_arguments=_arguments, inputs=_inputs, print_result=_print, print_differences=_print_differences,
    json_differences=_json_differences, onnx=True,
)

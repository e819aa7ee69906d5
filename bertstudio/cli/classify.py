"""bertstudio classify --model SRC "text" [--pair B] [--file F [--column C]] [--compare SRC2] [--json]"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.cli.common import add_model_options, load_for, load_second, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("classify", help="every label's score for a text, a text pair, or a CSV/TSV")
    add_model_options(parser, "classification")
    parser.add_argument("text", nargs="?", help="the text to classify (or use --file)")
    parser.add_argument("--pair", metavar="B", help="second text of a pair (e.g. is B a paraphrase of the text?)")
    parser.add_argument("--file", metavar="F", help="CSV/TSV (or .txt, one text per line) to classify row by row")
    parser.add_argument("--column", metavar="C", help="column of --file holding the texts (default: 'text' or first)")
    parser.add_argument("--compare", metavar="SRC2", help="a second model to run on the same input and compare")
    parser.set_defaults(func=run)


def _texts(args: argparse.Namespace) -> list[str] | None:
    from pathlib import Path

    from bertstudio.core.errors import InputError
    from bertstudio.core.tasks.classification import lines_to_texts, read_texts

    if args.file is None:
        if args.text is None:
            raise InputError("Nothing to classify.", hint='Give a text ("...") or --file F.')
        return None
    if args.text is not None or args.pair is not None:
        raise InputError("Give either a text (with --pair) or --file, not both.")
    path = Path(args.file)
    if path.suffix.lower() == ".txt" and args.column is None:
        try:
            return lines_to_texts(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise InputError(f"'{path}' cannot be read: {error.strerror}.") from error
    return read_texts(path, args.column)


def _run_one(loaded: Any, args: argparse.Namespace, texts: list[str] | None) -> Any:
    from bertstudio.cli.common import stderr_control
    from bertstudio.core.tasks.classification import classify, classify_batch

    if texts is None:
        return classify(loaded, args.text, args.pair)
    return classify_batch(loaded, texts, stderr_control())


def _print(result: Any, source: str) -> None:
    if result.kind == "regression":
        print(f"[{source}] value (regression head)")
    for number, row in enumerate(result.rows, start=1):
        if result.batch:
            print(f"\n{number}. {row.text[:80]}")
        for score in row.scores[:5] if result.batch else row.scores:
            value = f"{score.score:9.4f}" if result.kind == "regression" else f"{score.score:8.2%}"
            print(f"  {value}  {score.label}")


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.tasks.classification import compare

    texts = _texts(args)
    loaded = load_for(args, "classification")
    result = _run_one(loaded, args, texts)
    for note in result.notes:
        if note != result.head_warning:  # load_for already printed the head warning
            print(f"warning: {note}", file=sys.stderr)
    if not args.compare:
        if args.json:
            print_json(result.to_json())
        else:
            _print(result, args.model)
        return 0
    other = load_second(args, "classification")
    second = _run_one(other, args, texts)
    diffs = compare(result, second)
    if args.json:
        differences = [d.to_json() for d in diffs]
        print_json({
            "model": args.model, "result": result.to_json(),
            "compare": {"model": args.compare, "result": second.to_json(),
                        "differences": differences if result.batch else differences[0]},
        })
        return 0
    print(f"A: {args.model}")
    _print(result, args.model)
    print(f"\nB: {args.compare}")
    _print(second, args.compare)
    print("\ndifferences (B - A):")
    for number, diff in enumerate(diffs, start=1):
        prefix = f"{number}. " if result.batch else ""
        top = f"top changed {diff.top_a} -> {diff.top_b}" if diff.top_changed else f"top unchanged ({diff.top_a})"
        print(f"  {prefix}{top}; largest score change {diff.max_abs_delta:+.4f}")
    return 0

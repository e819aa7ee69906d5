"""bertstudio evaluate --model SRC --task TASK --data FILE [--compare SRC2] [--limit N] [--json]

Scores a model on a whole labelled file. With --json, stdout is one object:
{"n", "metrics", "per_class"|"per_type", "confusion", "errors", "slices", "notes"} and, with
--compare, "compare": {the same for model B, "disagreements", "mcnemar_p"}.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.cli.common import print_json, stderr_control

SHOWN_ERRORS = 10
# --<field>-column options, in EvalColumns' order (which tasks read each comes from the specs)
COLUMN_FIELDS = ("text", "pair", "label", "question", "context", "answer", "prompt")


def task_choices() -> list[str]:
    """`--task` names: the CLI name of every spec with an Evaluate adapter."""
    from bertstudio.core.evaluate.adapters import evaluable

    return [spec.cli_name for spec in evaluable().values()]


def _column_help(field: str) -> str:
    """'classify: Text; nsp: Sentence A' from the adapters' column roles."""
    from bertstudio.core.evaluate.adapters import evaluable

    return "; ".join(f"{spec.cli_name}: {label}" for spec in evaluable().values() if spec.evaluate
                     for name, label in spec.evaluate.columns if name == field)


def register(subparsers: argparse._SubParsersAction) -> None:
    from bertstudio.core.evaluate.adapters import evaluable

    kinds = "; ".join(f"{spec.cli_name}: {spec.evaluate.file_filter}" for spec in evaluable().values()
                      if spec.evaluate)
    parser = subparsers.add_parser(
        "evaluate", help="score a model on a whole labelled file (metrics, errors, compare two models)",
        description=f"Score a model on a labelled file: {kinds}.")
    parser.add_argument("--model", required=True, metavar="SRC", help="Hub id or local folder of the model to score")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.add_argument("--task", required=True, choices=task_choices())
    parser.add_argument("--data", required=True, metavar="FILE", help="the labelled file")
    parser.add_argument("--compare", metavar="SRC2", help="a second model to score on the same rows")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N rows")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0, help="masked LM: which tokens are masked (default 0)")
    columns = parser.add_argument_group("columns (default: detected from well-known names)")
    for field in COLUMN_FIELDS:
        columns.add_argument(f"--{field}-column", help=_column_help(field) or None)
    choosers = [spec.cli_name for spec in evaluable().values() if spec.evaluate and spec.evaluate.choice_columns]
    columns.add_argument("--choice-columns", help=f"{'/'.join(choosers)}: the choices, comma-separated "
                                                  "(default choice0, choice1…)")
    parser.set_defaults(func=run)


def request_from_args(args: argparse.Namespace) -> tuple[Any, Any]:
    from bertstudio.core.evaluate.evaluation import EvalRequest
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.evaluate.readers import EvalColumns
    from bertstudio.core.limits import MAX_BATCH_SIZE, MAX_ROWS, check_count
    from bertstudio.core.models import LoadRequest
    from bertstudio.core.tasks.spec import spec_for_command

    spec = spec_for_command(args.task)
    if args.limit is not None:
        check_count(args.limit, "--limit", 1, MAX_ROWS)
    check_count(args.batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    columns = EvalColumns(
        text=args.text_column, pair=args.pair_column, label=args.label_column, question=args.question_column,
        context=args.context_column, answer=args.answer_column, prompt=args.prompt_column,
        choices=tuple(c.strip() for c in (args.choice_columns or "").split(",") if c.strip()))
    evaluation = EvalRequest(args.data, columns, args.limit, EvalOptions(batch_size=args.batch_size, seed=args.seed))
    return LoadRequest(args.model, spec.key, args.device, args.dtype, spec.attn_implementation), evaluation


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.evaluate.evaluation import EvalComparison, evaluate_job

    request, evaluation = request_from_args(args)
    result = evaluate_job(request, evaluation, stderr_control(), args.compare)
    if sys.stderr.isatty():
        print("\r" + " " * 100 + "\r", end="", file=sys.stderr)
    for note in result.notes:
        print(f"{note.level}: {note.text}", file=sys.stderr)
    if args.json:
        print_json(result.to_json())
        return 0
    if isinstance(result, EvalComparison):
        print(f"A: {args.model}")
        print_evaluation(result.a)
        print(f"\nB: {args.compare}")
        print_evaluation(result.b)
        test = result.mcnemar
        print(f"\n{len(result.disagreements)} row(s) where A and B disagree; only A right: {test.a_only}, "
              f"only B right: {test.b_only}; McNemar p = {test.p_exact:.4g} (exact), {test.p_chi2:.4g} (chi-square)")
        return 0
    print_evaluation(result)
    return 0


def _number(value: float) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def print_evaluation(result: Any) -> None:
    print(f"{result.n} rows of {result.data}")
    for name, value in result.metrics.items():
        print(f"  {name:<20} {_number(value)}")
    if result.per_label:
        print(f"\n  {'per ' + result.adapter.per_label:<20} precision  recall     f1  support")
        for label, scores in result.per_label.items():
            print(f"  {label:<20} {scores.precision:9.4f} {scores.recall:7.4f} {scores.f1:6.4f} {scores.support:8d}")
    if result.confusion is not None:
        labels = result.confusion.labels
        width = max(8, *(len(label) for label in labels)) + 1
        print("\n  confusion (rows = gold, columns = predicted)")
        print("  " + " " * width + "".join(f"{label:>{width}}" for label in labels))
        for label, row in zip(labels, result.confusion.matrix, strict=True):
            print(f"  {label:<{width}}" + "".join(f"{count:>{width}}" for count in row))
    errors = result.errors
    if errors:
        print(f"\n  {len(errors)} error(s); the first {min(len(errors), SHOWN_ERRORS)} (row, line: gold -> predicted):")
        for row in errors[:SHOWN_ERRORS]:
            print(f"  {row.row:>5}, line {row.line}: {row.gold} -> {row.prediction}  ({row.score:.3f})")

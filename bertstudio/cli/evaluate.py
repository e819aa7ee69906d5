"""bertstudio evaluate --model SRC [--task TASK] --data FILE [--compare SRC2] [--limit N] [--json]

Scores a model on a whole labelled file. With --json, stdout is one object:
{"n", "metrics", "per_class"|"per_type", "confusion", "errors", "slices", "notes"} and, with
--compare, "compare": {the same for model B, "disagreements", "mcnemar_p"} and what compression
costs: "linear_cka" (layers_A + 1) x (layers_B + 1), "salience_agreement", "size", "speed". A task with class
probabilities (classification, NSP) adds "curves": {"average_precision": {class: AP}, "roc_auc":
{class: AUC}} (one-vs-rest, scikit-learn; "micro" too with more than two classes); --threshold T
adds "threshold": the positive class's precision, recall, F1, accuracy and confusion at T. A multi-label
model (train --multi-label) reports micro_f1, macro_f1, samples_f1, subset_accuracy and hamming_loss under
"metrics" and "per_class" precision/recall/F1, with every label on at probability >= --threshold (0.5).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.cli._compression import compression_of, print_report
from bertstudio.cli._quantize import add_quantize_options, compare_source
from bertstudio.cli.common import add_runtime_option, print_json, stderr_control
from bertstudio.cli.task_command import clear_progress_line

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
    parser.add_argument("--task", choices=task_choices(),
                        help="what to score the model as (default: the task its checkpoint was trained for, "
                             "from config.json's architectures)")
    parser.add_argument("--data", required=True, metavar="FILE", help="the labelled file")
    parser.add_argument("--compare", metavar="SRC2", help="a second model to score on the same rows")
    add_quantize_options(parser)
    add_runtime_option(parser)
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N rows")
    parser.add_argument("--batch-size", type=int,
                        help="rows per forward at most (default: as many as the engine's token budget holds, "
                             "up to 256)")
    parser.add_argument("--seed", type=int, default=0, help="masked LM: which tokens are masked (default 0)")
    parser.add_argument("--threshold", type=float, metavar="T",
                        help="classification: metrics when a row is the positive class at probability >= T (0-1); "
                             "a multi-label model: a label is predicted where its probability is >= T "
                             "(default 0.5)")
    parser.add_argument("--positive", metavar="CLASS",
                        help="the class --threshold applies to (default: a binary model's second class; "
                             "required with more than two classes: that class against the rest)")
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

    spec = spec_for_command(args.task or default_task(config_source(args)))
    if args.limit is not None:
        check_count(args.limit, "--limit", 1, MAX_ROWS)
    if args.batch_size is not None:
        check_count(args.batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    columns = EvalColumns(
        text=args.text_column, pair=args.pair_column, label=args.label_column, question=args.question_column,
        context=args.context_column, answer=args.answer_column, prompt=args.prompt_column,
        choices=tuple(c.strip() for c in (args.choice_columns or "").split(",") if c.strip()))
    threshold = args.threshold if args.threshold is not None else EvalOptions.threshold
    evaluation = EvalRequest(args.data, columns, args.limit,
                             EvalOptions(batch_size=args.batch_size, seed=args.seed, threshold=threshold))
    return LoadRequest(args.model, spec.key, args.device, args.dtype, spec.attn_implementation,
                       args.quantize, args.runtime), evaluation


def config_source(args: argparse.Namespace) -> str:
    """Where config.json says what the model was trained for: an .onnx file's folder with --runtime onnx."""
    from pathlib import Path

    path = Path(args.model).expanduser()
    return str(path.parent) if args.runtime == "onnx" and path.suffix.lower() == ".onnx" else args.model


def default_task(model: str) -> str:
    """The task `model`'s checkpoint was trained for, when --task is not given."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.evaluate.adapters import checkpoint_task

    task = checkpoint_task(model)
    if task is None:
        raise InputError(f"Which task should '{model}' be scored as? Its checkpoint does not say.",
                         hint=f"Add --task ({', '.join(task_choices())}).")
    return task


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.evaluate.evaluation import EvalComparison, evaluate_job

    request, evaluation = request_from_args(args)
    check_threshold_args(args)
    compare = compare_source(args)  # "SRC [int8]" with --compare-quantize
    result = evaluate_job(request, evaluation, stderr_control(), compare)
    clear_progress_line()
    for note in result.notes:
        print(f"{note.level}: {note.text}", file=sys.stderr)
    pair = (result.a, result.b) if isinstance(result, EvalComparison) else (result,)
    at = [threshold_of(one, args) for one in pair]  # an unusable --threshold fails before anything prints
    report = compression_of(request, result, compare) if isinstance(result, EvalComparison) and compare else None
    if args.json:
        data = result.to_json()
        for one, part, found in zip(pair, (data, data.get("compare")), at, strict=False):
            add_curves(part, one, found)
        data.update(report.to_json() if report is not None else {})
        print_json(data)
        return 0
    if isinstance(result, EvalComparison):
        print(f"A: {result.a.model}")
        print_evaluation(result.a, at[0])
        print(f"\nB: {result.b.model}")
        print_evaluation(result.b, at[1])
        a, b = result.a, result.b
        print(f"\ntop-1 agreement {result.agreement:.2%}; size {a.size_mb:.1f} MB vs {b.size_mb:.1f} MB; "
              f"{1000 * a.seconds / max(1, a.n):.2f} vs {1000 * b.seconds / max(1, b.n):.2f} ms per row")
        test = result.mcnemar
        print(f"\n{len(result.disagreements)} row(s) where A and B disagree; only A right: {test.a_only}, "
              f"only B right: {test.b_only}; McNemar p = {test.p_exact:.4g} (exact), {test.p_chi2:.4g} (chi-square)")
        if report is not None:
            print_report(report)
        return 0
    print_evaluation(result, at[0])
    return 0


def check_threshold_args(args: argparse.Namespace) -> None:
    """--threshold within 0-1 and --positive only beside it, before any model loads."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.evaluate.curves import check_threshold

    if args.threshold is not None:
        check_threshold(args.threshold)
    elif args.positive is not None:
        raise InputError("--positive names the class --threshold applies to.", hint="Add --threshold T.")


def threshold_of(result: Any, args: argparse.Namespace) -> Any:
    """The metrics at --threshold for the positive class (None without --threshold)."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.evaluate.curves import default_positive, has_probabilities, threshold_table
    from bertstudio.core.tasks.classification.evaluate_multilabel import is_multi_label_result

    if args.threshold is None or is_multi_label_result(result):
        return None  # a multi-label head's metrics are already at --threshold (every label's)
    if not has_probabilities(result):
        raise InputError("--threshold needs class probabilities, which this task's evaluation does not give.",
                         hint="Use it with a classification model.")
    classes = result.classes
    positive = args.positive
    if positive is None and len(classes) > 2:
        raise InputError(f"This model has {len(classes)} classes: name the one --threshold applies to.",
                         hint=f"Add --positive CLASS (one of {', '.join(classes)}).")
    if positive is not None and positive not in classes:
        raise InputError(f"The model has no class '{positive}'.", hint=f"Its classes: {', '.join(classes)}.")
    label = positive or default_positive(classes)
    return threshold_table(result.probabilities, classes, result.golds, label).at(args.threshold)


def add_curves(data: dict[str, Any] | None, result: Any, at: Any) -> None:
    from bertstudio.core.evaluate.curves import evaluation_summary

    if data is None:
        return
    found = evaluation_summary(result)
    if found is not None:
        data["curves"] = found
    if at is not None:
        data["threshold"] = at.to_json()


def _number(value: float) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def print_evaluation(result: Any, at: Any = None) -> None:
    print(f"{result.n} rows of {result.data}")
    for name, value in result.metrics.items():
        print(f"  {name:<20} {_number(value)}")
    if result.per_label:
        print(f"\n  {'per ' + result.adapter.per_label:<20} precision  recall     f1  support")
        for label, scores in result.per_label.items():
            print(f"  {label:<20} {scores.precision:9.4f} {scores.recall:7.4f} {scores.f1:6.4f} {scores.support:8d}")
    if result.confusion is not None:
        print("\n  confusion (rows = gold, columns = predicted)")
        print_confusion(result.confusion.labels, result.confusion.matrix)
    print_curves(result, at)
    errors = result.errors
    if errors:
        print(f"\n  {len(errors)} error(s); the first {min(len(errors), SHOWN_ERRORS)} (row, line: gold -> predicted):")
        for row in errors[:SHOWN_ERRORS]:
            print(f"  {row.row:>5}, line {row.line}: {row.gold} -> {row.prediction}  ({row.score:.3f})")


def print_confusion(labels: Any, matrix: Any) -> None:
    width = max(8, *(len(label) for label in labels)) + 1
    print("  " + " " * width + "".join(f"{label:>{width}}" for label in labels))
    for label, row in zip(labels, matrix, strict=True):
        print(f"  {label:<{width}}" + "".join(f"{count:>{width}}" for count in row))


def print_curves(result: Any, at: Any) -> None:
    """Average precision and ROC AUC per class (one-vs-rest), and the metrics at --threshold."""
    from bertstudio.core.evaluate.curves import evaluation_summary

    found = evaluation_summary(result)
    if found is not None:
        print(f"\n  {'one-vs-rest curves':<20} avg precision  ROC AUC")
        areas = {**{k: (v, found["roc_auc"][k]) for k, v in found["average_precision"].items()},
                 **({"micro-average": tuple(found["micro"].values())} if "micro" in found else {})}
        for label, (ap, auc) in areas.items():
            print(f"  {label:<20} {_number(ap):>13} {_number(auc) if auc is not None else 'n/a':>8}")
    if at is not None:
        print(f"\n  at threshold {at.threshold:g}: a row is '{at.label}' when its probability is >= {at.threshold:g}")
        print(f"  precision {at.precision:.4f}  recall {at.recall:.4f}  f1 {at.f1:.4f}  accuracy {at.accuracy:.4f}")
        print_confusion(at.labels, at.matrix)

"""bertstudio check --model SRC --suite FILE [--compare SRC2] [--failures OUT.csv] [--json]

Runs a behavioural test suite (CheckList's MFT, INV and DIR tests; see README, Tests). With
--json, stdout is {"suite", "task", "model", "tests": [{"name", "type", "capability", "cases",
"failures", "failure_rate", "examples"}], "notes"} and, with --compare, "compare": the same for
model B plus "differences" per test. --failures writes every failing MFT/INV case as a labelled
row (text, label, test, type, split: the seeded "train"/"measure" half); for NER, QA and multiple
choice, in the task's training format instead (CoNLL, SQuAD JSON, a choice CSV). A template's `{mask}` is
filled by the top-k words of a masked LM (--mask-model, else the suite's "mask_model"); the words
are printed on stderr and, with --json, under "masks".
"""

from __future__ import annotations

import argparse
import sys

from bertstudio.cli._quantize import add_quantize_options, compare_source
from bertstudio.cli.common import print_json, stderr_control
from bertstudio.cli.task_command import clear_progress_line


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="run a behavioural test suite (MFT, INV, DIR) on a model",
        description="Run a behavioural test suite: minimum functionality (MFT), invariance (INV) and "
                    "directional (DIR) tests; failure rates per test, two models side by side.")
    parser.add_argument("--model", required=True, metavar="SRC", help="Hub id or local folder of the model")
    parser.add_argument("--suite", required=True, metavar="FILE",
                        help="a suite file (JSON), or the name of a built-in suite: " + ", ".join(_built_in()))
    parser.add_argument("--compare", metavar="SRC2", help="a second model run on the same cases")
    parser.add_argument("--failures", metavar="OUT.csv", help="write the failing cases as labelled rows")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --failures file")
    parser.add_argument("--mask-model", metavar="SRC", help="masked LM whose top-k words fill {mask} in templates "
                                                            "(default: the suite's mask_model)")
    parser.add_argument("--mask-top-k", type=int, metavar="K", help="words per {mask} (default: the suite's "
                                                                    "mask_top_k, else 10)")
    parser.add_argument("--seed", type=int, default=0, help="the train/measure split of --failures (default 0)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    add_quantize_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.set_defaults(func=run)


def _built_in() -> list[str]:
    from bertstudio.core.suites.builtin import built_in_suites

    return list(built_in_suites())


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.suites.builtin import suite_path
    from bertstudio.core.suites.fix import can_label, failure_rows, write_failures
    from bertstudio.core.suites.fix_tasks import task_rows, write_task_halves
    from bertstudio.core.suites.jobs import check_job, load_request
    from bertstudio.core.suites.masks import masked_templates, suggestions_job, top_k_of
    from bertstudio.core.suites.suite import parse_suite, read_suite_data

    path = suite_path(args.suite)
    data = read_suite_data(path)
    if args.mask_top_k is not None:
        top_k_of(data, args.mask_top_k, "--mask-top-k")
    if args.failures:  # checked before the suite runs: never over a file unasked, never into a missing folder
        failures_paths(args.failures, path, data, args.overwrite)
    masks = None
    mask_source = args.mask_model or (data.get("mask_model") if isinstance(data, dict) else None)
    if masked_templates(data) and isinstance(mask_source, str) and mask_source:
        parse_suite(data, path.name, str(path), {name: ["x"] for name in masked_templates(data)})  # errors first
        k = top_k_of(data, args.mask_top_k, "--mask-top-k" if args.mask_top_k is not None else "")
        masks = suggestions_job(mask_source, data, None, stderr_control(), k, args.seed)
        clear_progress_line()
        if masks.warning:  # the words of an untrained masked-LM head: said, as every task command says it
            print(f"warning: --mask-model {mask_source}: {masks.warning}", file=sys.stderr)
        for name, words in masks.items():
            print(f"{{mask}} in '{name}': {', '.join(words)}", file=sys.stderr)
    suite = parse_suite(data, path.name, str(path), masks)  # a malformed suite stops here, before any model loads
    request = load_request(args.model, suite, args.device, args.dtype, args.quantize)
    result = check_job(request, suite, stderr_control(), compare_source(args))
    clear_progress_line()
    print_notes(result.a)
    if result.b is not None:
        print_notes(result.b, "B: ")  # as the task commands say B's notes
    if args.failures:
        if can_label(suite.task):
            labelled = failure_rows(result.a, args.seed)
            path, written = write_failures(labelled, args.failures), len(labelled)
            print(f"{written} failing case(s) written to {path}", file=sys.stderr)
        else:  # NER, QA, multiple choice: the task's own training format (fix_tasks.py), one file per half
            rows, skipped = task_rows(result.a, args.seed)
            for half, where in zip(("train", "measure"), write_task_halves(suite.task, rows, args.failures),
                                   strict=True):
                count = sum(r.split == half for r in rows)
                print(f"{count} failing case(s) of the {half} half written to {where}", file=sys.stderr)
            if skipped:
                print(f"note: {skipped} failing case(s) could not be labelled (a changed word count, or an answer "
                      "the context does not hold)", file=sys.stderr)
    if args.json:
        print_json(result.to_json())
        return 0
    print(f"{suite.name}: {suite.cases} cases on {result.a.model}")
    print_tests(result.a)
    if result.b is not None:
        print(f"\nB: {result.b.model}")
        print_tests(result.b)
        print(f"\n  {'test':<32} {'A':>7} {'B':>7} {'B - A':>7} {'fixed':>6} {'broken':>6}")
        for d in result.differences:
            print(f"  {d.name[:32]:<32} {d.a.failure_rate:7.1%} {d.b.failure_rate:7.1%} {d.difference:+7.1%} "
                  f"{d.fixed:6d} {d.broken:6d}")
    return 0


def failures_paths(failures: str, suite: object, data: object, overwrite: bool) -> None:
    """The --failures file(s) checked before any model loads (core/outputs.py's policy); never the suite."""
    from pathlib import Path

    from bertstudio.core.errors import InputError
    from bertstudio.core.outputs import output_file
    from bertstudio.core.suites.fix import can_label
    from bertstudio.core.suites.fix_tasks import half_paths
    from bertstudio.core.suites.suite import suite_task

    target = Path(failures).expanduser()
    if target.exists() and isinstance(suite, Path) and suite.exists() and target.samefile(suite):
        raise InputError(f"--failures '{failures}' is the suite file itself.", hint="Give the name of a new file.")
    task = suite_task(data)
    paths = [target] if not task or can_label(task) else list(half_paths(task, target))
    for path in paths:
        output_file(path, "failures file", overwrite)


def print_notes(result: object, prefix: str = "") -> None:
    """A head never trained for the suite's task as a warning (as every task command says it), the rest as notes."""
    head = getattr(result, "head_warning", "")
    for note in getattr(result, "notes", ()):
        print(f"{'warning' if note == head else 'note'}: {prefix}{note}", file=sys.stderr)


def print_tests(result: object) -> None:
    tests = getattr(result, "tests", ())
    print(f"  {'test':<32} {'type':<4} {'cases':>6} {'fail':>6} {'rate':>7}  example")
    for test in tests:
        example = test.failing[0] if test.failing else None
        shown = ""
        if example is not None:
            found = example.to_json()
            shown = (f"{found['input']} -> {found['predicted']}" if "changed" not in found else
                     f"{found['changed']} -> {found['predicted_changed']} (was {found['predicted']})")
        print(f"  {test.name[:32]:<32} {test.type:<4} {test.cases:6d} {test.failures:6d} {test.failure_rate:7.1%}  "
              f"{shown[:80]}")

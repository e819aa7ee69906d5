"""bertstudio erase --model M --layer L --concept FILE [--data FILE] [--positions all|first] [--json]

Linear concept erasure (LEACE, EleutherAI's concept-erasure) at layer L (0 = the embeddings): the
concept file is a table with `text` and `concept` columns; every token of a text is labelled with its
concept, LEACE is fitted on the training texts' layer-L states, and a logistic-regression probe's
accuracy on the held-out texts is reported before and after erasure, beside the majority class
(what a probe that learnt nothing scores). With --data, a labelled file of the model's task is
scored intact and with the concept erased at layer L in the forward pass: what the model loses.
--positions first fits and erases the first token ([CLS]) only, where a classifier reads.
"""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli.common import print_json, stderr_control
from bertstudio.cli.task_command import clear_progress_line, print_notes


def register(subparsers: Any) -> None:
    from bertstudio.core.features.erase import POSITIONS

    parser = subparsers.add_parser(
        "erase", help="erase a concept from a layer (LEACE) and see what a probe and the task lose",
        description=__doc__.split("\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, metavar="SRC", help="Hub id or local model folder")
    parser.add_argument("--layer", required=True, metavar="L", help="hidden state: 0 = embeddings, 1..layers")
    parser.add_argument("--concept", required=True, metavar="FILE", help="CSV/TSV/JSONL with text,concept columns")
    parser.add_argument("--data", metavar="FILE", help="a labelled file of the model's task, scored before and after")
    parser.add_argument("--task", metavar="TASK", help="the task --data is scored as (default: the checkpoint's)")
    parser.add_argument("--positions", default="all", choices=POSITIONS,
                        help="fit and erase every token (all, default) or the first token only (first)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    parser.add_argument("--json", action="store_true",
                        help="probe_accuracy_before, probe_accuracy_after, majority (and metrics_before/after)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.corpus.query import encoder_task
    from bertstudio.core.errors import InputError
    from bertstudio.core.evaluate.adapters import checkpoint_task, evaluable
    from bertstudio.core.features.erase import erase_concept, read_concepts
    from bertstudio.core.limits import as_int
    from bertstudio.core.models import LoadRequest, load_model

    as_int(args.layer, "--layer")
    control = stderr_control()
    read_concepts(args.concept, control)  # a bad concept file is said before the model loads
    task = args.task or checkpoint_task(args.model)
    dataset = None
    if args.data is not None:
        from bertstudio.core.evaluate.readers import read_dataset

        if task is None or task not in evaluable():
            raise InputError("Say which task --data is scored as (--task): the checkpoint does not say.",
                             hint=f"Tasks: {', '.join(evaluable())}.")
        dataset = read_dataset(task, args.data, control=control)
    elif args.task is not None and args.task not in evaluable():
        raise InputError(f"Unknown task {args.task!r}.", hint=f"Tasks: {', '.join(evaluable())}.")
    loaded = load_model(LoadRequest(args.model, task or encoder_task(), args.device), control)
    erasure = erase_concept(loaded, args.layer, args.concept, control, dataset, args.positions)
    clear_progress_line()
    print_notes(erasure.notes)
    if args.json:
        print_json(erasure.to_json())
        return 0
    where = "the first token" if erasure.positions == "first" else "every token"
    print(f"concept {' / '.join(erasure.classes)} at layer {erasure.layer} ({where}; {erasure.texts} texts, "
          f"{erasure.tokens:,} states, {erasure.held_out_tokens:,} held out):")
    print(f"  probe accuracy {erasure.probe_accuracy_before:.4f} -> {erasure.probe_accuracy_after:.4f} "
          f"(majority class {erasure.majority:.4f})")
    if erasure.comparison is not None:
        metric = erasure.main_metric
        before, after = erasure.comparison.a.metrics, erasure.comparison.b.metrics
        print(f"  {metric} on {erasure.comparison.a.n} rows: {before.get(metric, float('nan')):.4f} -> "
              f"{after.get(metric, float('nan')):.4f} ({len(erasure.comparison.disagreements)} predictions changed)")
    return 0

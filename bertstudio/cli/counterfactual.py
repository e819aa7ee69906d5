"""bertstudio counterfactual --model SRC --task TASK INPUT... [--method M] [--mlm SRC2] [--max-edits N] [--json]

The fewest word edits that flip the model's prediction, each verified by running the task on the
edited text: classify's text and pair (the label must change), nsp's A and B (IsNext <-> NotNext),
choice's prompt (the best ending must change), fill-mask's context (the top candidate at the first mask).
Methods: mlm (a masked LM's substitutions: the model's own MLM head, or --mlm with the same
vocabulary, e.g. bert-base-uncased), hotflip (gradient-guided word flips), ablation (word removals).
"""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli._inputs import add_input_options, checked, task_texts
from bertstudio.cli.common import stderr_control
from bertstudio.core.explain.inputs import explainable

METHODS = ("mlm", "hotflip", "ablation")  # as core.whatif.generators, without torch


def register(subparsers: Any) -> None:
    from bertstudio.core.whatif.search import MAX_BEAM, MAX_EDITS, MAX_LIMIT, MAX_PER_WORD

    parser = subparsers.add_parser(
        "counterfactual", help="the fewest word edits that flip the prediction (what if)",
        description=__doc__.split("\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    flipped = [spec for spec in explainable() if spec.counterfactual is not None]
    add_input_options(parser, flipped, "the task whose prediction is flipped")
    parser.add_argument("--method", default="mlm", choices=METHODS, help="how edits are proposed (default mlm)")
    parser.add_argument("--mlm", metavar="SRC2", help="mlm: the masked LM proposing words (default: the model's own)")
    parser.add_argument("--max-edits", default="2", metavar="N", help=f"edits per result, 1-{MAX_EDITS} (default 2)")
    parser.add_argument("--limit", default="5", metavar="K", help=f"results, 1-{MAX_LIMIT} (default 5)")
    parser.add_argument("--per-word", default="8", metavar="P",
                        help=f"proposals per word, 1-{MAX_PER_WORD} (default 8)")
    parser.add_argument("--beam", default="4", metavar="W", help=f"inputs kept per depth, 1-{MAX_BEAM} (default 4)")
    parser.set_defaults(func=run)


def _print(result: Any) -> None:
    original = result.original
    print(f"original: {original.label} ({original.score:.4f}); "
          f"{result.method}, {result.evaluated:,} edited inputs scored")
    for number, found in enumerate(result.counterfactuals, 1):
        edits = ", ".join(f"{e.word.text!r} -> {e.new!r}" if e.new else f"removed {e.word.text!r}" for e in found.edits)
        print(f"{number:>3}. {found.prediction.label} ({found.prediction.score:.4f})  [{edits}]")
        for text in found.texts:
            print(f"     {text}")


def run(args: argparse.Namespace) -> int:
    from bertstudio.cli.explain import load
    from bertstudio.cli.task_command import print_result
    from bertstudio.core.tasks.spec import spec_for_command
    from bertstudio.core.whatif.search import find, options

    chosen = options(args.method, args.max_edits, args.limit, args.per_word, args.beam, args.mlm)  # before loading
    spec = spec_for_command(args.task)
    texts = checked(spec, task_texts(args, spec))
    assert spec.explain is not None  # --task choices have one
    loaded = load(args, spec)
    result = find(loaded, spec, spec.explain.inputs_of(texts), chosen, stderr_control())
    return print_result(result, args.json, _print)

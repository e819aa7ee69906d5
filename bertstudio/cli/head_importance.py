"""bertstudio head-importance --model SRC --task TASK (--data FILE | INPUT...) [--prune K] [--json]

Michel et al. (2019): |d loss / d gate| per attention head, summed over the inputs, normalised
per layer (L2) unless --raw. INPUT as `bertstudio explain` takes it (one input). --data: for
classify a CSV/TSV with a text column (and a label column: the loss is then against the gold
labels); for the other tasks one input per line, its parts separated by tabs (nsp: A<TAB>B,
qa: question<TAB>context, choice: prompt<TAB>ending<TAB>ending...).
--prune K names the K least important heads, ready for --ablate-heads on the task's command.
"""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli._inputs import add_input_options, checked, task_texts
from bertstudio.cli.common import print_json, stderr_control
from bertstudio.cli.explain import load
from bertstudio.cli.task_command import print_notes
from bertstudio.core.explain.inputs import explainable


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "head-importance", help="how much each attention head matters to the task's loss (layer x head)",
        description=__doc__.split("\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser, explainable(), "the task whose loss the heads are measured on")
    parser.add_argument("--data", metavar="FILE", help="the inputs, one per row (see above)")
    parser.add_argument("--raw", action="store_true", help="do not normalise each layer's importance")
    parser.add_argument("--prune", default="0", metavar="K", help="name the K least important heads")
    parser.set_defaults(func=run)


def _examples(args: argparse.Namespace, spec: Any) -> list[Any]:
    from bertstudio.core.errors import InputError
    from bertstudio.core.explain.importance import Example, read_examples

    texts = task_texts(args, spec)
    if args.data and texts:
        raise InputError("Give either --data FILE or one INPUT, not both.")
    if args.data:
        return read_examples(args.data, spec.key)
    return [Example(checked(spec, texts))]


def _print(result: Any, prune: tuple[tuple[int, int], ...]) -> None:
    heads = len(result.importance[0]) if result.importance else 0
    print(f"head importance ({result.normalization}; {result.loss}; {result.examples} input(s))")
    print("layer " + "".join(f"{h:>8}" for h in range(heads)))
    for layer, row in enumerate(result.importance):
        print(f"{layer:>5} " + "".join(f"{v:8.4f}" for v in row))
    if prune:
        print("least important: --ablate-heads " + ",".join(f"{layer}:{head}" for layer, head in prune))


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.errors import InputError
    from bertstudio.core.explain.importance import head_importance
    from bertstudio.core.limits import as_int
    from bertstudio.core.tasks.spec import spec_for_command

    prune_count = as_int(args.prune, "--prune")  # before the model is loaded
    spec = spec_for_command(args.task)
    examples = _examples(args, spec)
    loaded = load(args, spec)
    result = head_importance(loaded, spec.key, examples, normalize=not args.raw, control=stderr_control())
    total = sum(len(row) for row in result.importance)
    if not 0 <= prune_count < total:
        raise InputError(f"--prune {prune_count} is out of range: this model has {total} heads.")
    prune = result.least_important(prune_count)
    print_notes(result.notes)
    if args.json:
        data = result.to_json()
        if prune_count:
            data["prune"] = [list(head) for head in prune]
        print_json(data)
    else:
        _print(result, prune)
    return 0

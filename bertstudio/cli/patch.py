"""bertstudio patch --model SRC --task TASK INPUT... --corrupted INPUT... [--target T] [--json]

Activation patching ("Trace why"): the model runs on the corrupted input with one activation copied
from the clean run, and the target probability says how much of the clean answer comes back.
The clean input as the task's own command takes it (see `bertstudio explain -h`), the corrupted one
after --corrupted in the same shape, e.g.
  patch --task qa --model M QUESTION CONTEXT --corrupted QUESTION2 CONTEXT2
or --noise 2,3: Gaussian noise (3 x the embeddings' standard deviation, --seed) on those tokens.
--target as explain takes it (default: the clean prediction; qa: start or end of the clean best answer).
states[l][p]: hidden state l (0 = embeddings' output, l = layer l's output) at position p copied;
heads[l][h]: head h's slice of layer l's attention context (every position) copied; layers[l]: all
heads of layer l. Inputs of different token lengths: no states (undefined position by position);
heads and layers at the positions both share. --method attribution: the gradient estimate (fast on
long inputs), with its Spearman agreement with exact patching on --sample cells.
"""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli._inputs import add_input_options, checked, task_texts
from bertstudio.cli.common import stderr_control
from bertstudio.cli.explain import load
from bertstudio.cli.task_command import print_result
from bertstudio.core.explain.inputs import explainable


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "patch", help="which layer, position and head carry the answer (activation patching)",
        description=__doc__.split("\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser, explainable(), "the task whose answer is traced")
    parser.add_argument("--corrupted", nargs="+", metavar="INPUT", help="the corrupted input, in the clean one's shape")
    parser.add_argument("--noise", metavar="P[,P...]", help="instead of --corrupted: noise on these token positions")
    parser.add_argument("--seed", default="0", metavar="S", help="--noise: the seed (default 0)")
    parser.add_argument("--target", metavar="T", help="the output whose probability is restored (default: see above)")
    parser.add_argument("--method", default="exact", choices=("exact", "attribution"),
                        help="exact patching (default) or attribution patching (a gradient estimate)")
    parser.add_argument("--sample", default="32", metavar="N",
                        help="--method attribution: cells patched exactly to check it, 3-1024 (default 32)")
    parser.set_defaults(func=run)


def _noise(args: argparse.Namespace) -> Any:
    from bertstudio.core.errors import InputError
    from bertstudio.core.limits import check_count
    from bertstudio.core.patching.trace import MAX_NOISE_SEED, Noise

    if args.noise is None:
        return None
    if args.corrupted:
        raise InputError("Give either --corrupted or --noise, not both.")
    items = [item for item in args.noise.replace(" ", ",").split(",") if item]
    if not items:
        raise InputError("--noise needs token positions, e.g. --noise 2,3.")
    positions = tuple(check_count(item, "A --noise position", 0, 100_000) for item in items)
    return Noise(positions, check_count(args.seed, "--seed", 0, MAX_NOISE_SEED))


def _corrupted(args: argparse.Namespace, spec: Any) -> tuple[str, ...] | None:
    from bertstudio.core.errors import InputError

    if not args.corrupted:
        if args.noise is None:
            raise InputError("Give the corrupted input after --corrupted (in the clean input's shape), "
                             "or --noise POSITIONS.", hint="e.g. patch ... \"a good film\" --corrupted \"a bad film\"")
        return None
    return checked(spec, tuple(str(p) for p in args.corrupted), "--corrupted: ")


def _row(values: Any, result: Any, width: int = 6) -> str:
    cells = []
    for value in values:
        share = result.restored(value)
        shown = "-" if value is None else "?" if share is None else f"{round(100 * share) or 0:d}%"
        cells.append(f"{shown:>{width}}")
    return "".join(cells)


def _print(result: Any) -> None:
    print(f"{result.target_label}: clean {result.clean_score:.4f}, corrupted {result.corrupted_score:.4f} "
          f"({result.method} patching; cells: share of the clean answer restored)")
    if result.method == "attribution" and result.agreement is not None:
        print(f"agreement with exact patching: Spearman {result.agreement:+.3f} on {result.agreement_cells} cells")
    if result.states is not None:
        print("\nstates (rows: positions of the clean input; columns: hidden state 0 = embeddings .. last layer)")
        print(" " * 24 + "".join(f"{level:>6}" for level in range(len(result.states))))
        for position, token in enumerate(result.clean_tokens):
            mark = "*" if position in result.differing else " "
            print(f"{mark}{position:>4} {token[:18]:<18}" + _row([row[position] for row in result.states], result))
    heads = len(result.heads[0]) if result.heads else 0
    print("\nheads (rows: layers from 0; columns: heads from 0; 'all': every head of the layer)")
    print(" " * 6 + "".join(f"{head:>6}" for head in range(heads)) + "   all")
    for layer, row in enumerate(result.heads):
        print(f"{layer:>6}" + _row(row, result) + _row([result.layers[layer]], result))


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.limits import check_count
    from bertstudio.core.patching.trace import MAX_SAMPLE, trace
    from bertstudio.core.tasks.spec import spec_for_command

    sample = check_count(args.sample, "--sample", 3, MAX_SAMPLE)
    noise = _noise(args)
    spec = spec_for_command(args.task)
    corrupted = _corrupted(args, spec)
    texts = checked(spec, task_texts(args, spec))
    loaded = load(args, spec)
    result = trace(loaded, spec.key, texts, corrupted, args.target, noise=noise,
                   method=args.method, control=stderr_control(), sample=sample)
    return print_result(result, args.json, _print)

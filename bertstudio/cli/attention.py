"""bertstudio attention --model SRC "text" [--pair "B"] [--layer L --head H] [--qk] [--norms] [--compare SRC2]
[--out FILE [--compress] | --json]"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.cli.task_command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the text (sentence A)")
    parser.add_argument("--pair", metavar="B", default=None, help="a second sentence (B): segment ids are set")
    parser.add_argument("--layer", type=int, default=None, help="only this layer (0-based; needs --head)")
    parser.add_argument("--head", type=int, default=None, help="only this head (0-based; needs --layer)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help=".npz (attentions: layers x heads x T x T, tokens; norms with --norms), .csv or .json")
    parser.add_argument("--compress", action="store_true",
                        help="compress the .npz (about 12 %% smaller at 512 tokens, several seconds slower)")
    parser.add_argument("--qk", action="store_true",
                        help="with --layer/--head and --json: that head's queries, keys, values (after the "
                             "projection and its bias) and scaled pre-softmax scores, as \"qk\"")
    parser.add_argument("--norms", action="store_true",
                        help="value-weighted attention ||alpha_ij f(x_j)|| (Kobayashi et al. 2020) per layer and "
                             "head, as \"norms\" in --json and in the --out file")


def _inputs(args: argparse.Namespace) -> Any:
    """Every argument checked before a model is loaded: a bad --out costs nothing."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.tasks.attention import AttentionInput
    from bertstudio.core.tasks.attention.export import check_output

    if (args.layer is None) != (args.head is None):
        raise InputError("Give both --layer and --head, or neither.")
    if args.qk and args.layer is None:
        raise InputError("--qk shows one head: give --layer and --head too.")
    if args.qk and getattr(args, "python", False):
        raise InputError("--python writes the attention script (with --norms, the norms too); one head's "
                         "queries and keys (--qk) are not in it.",
                         hint="Leave out --qk for the script, or leave out --python and add --json for q·k.")
    if args.compress and not (args.out and args.out.lower().endswith(".npz")):
        raise InputError("--compress applies to a .npz file given with --out.")
    if args.out is not None and not args.out.strip():
        raise InputError("--out needs a file name (.npz, .csv or .json).")
    if args.out:
        check_output(args.out, comparison=bool(args.compare), one_head_norms=args.norms and args.layer is not None)
    return AttentionInput(args.text, args.pair, qk=args.qk, norms=args.norms)


def _after_run(outcome: Any, args: argparse.Namespace) -> None:
    """Check the asked head exists, warn why B cannot be compared, write --out."""
    from bertstudio.core.tasks.attention.export import save

    result, second, differences = outcome.result, outcome.second, outcome.diff
    if args.layer is not None:
        result.head(args.layer, args.head)  # a clear error for a head that does not exist
        if second is not None and differences is not None and differences.diff is not None:
            second.head(args.layer, args.head)
    if differences is not None and differences.message:
        print(f"warning: {differences.message}", file=sys.stderr)
    if not args.out:
        return
    comparison = None
    if second is not None:
        from bertstudio.core.tasks.attention import AttentionComparison

        comparison = AttentionComparison(args.compare, second, differences.diff, differences.message)
    save(args.out, result, args.layer, args.head, comparison, args.model, compress=args.compress)
    if not args.json:
        what = (f"{result.layers} layers x {result.heads} heads" if args.layer is None
                else f"layer {args.layer} head {args.head}")
        print(f"wrote {args.out}: {what} x {result.length} tokens")


def _json(result: Any, args: argparse.Namespace) -> Any:
    from bertstudio.core.tasks.attention.export import check_json_size

    check_json_size(result, args.layer, args.head)
    return result.to_json(args.layer, args.head)


def _json_differences(differences: Any, args: argparse.Namespace) -> Any:
    return differences.to_json(args.layer, args.head)


def _print(result: Any) -> None:
    print(f"{result.layers} layers x {result.heads} heads, {result.length} tokens: {' '.join(result.tokens)}")
    print("Use --out FILE (.npz/.csv/.json) or --json to get the weights.")


def _print_differences(differences: Any) -> None:
    if differences.diff is None:
        print(f"  none: {differences.message}")
        return
    print("  most changed heads (mean |difference|): " + ", ".join(
        f"layer {lay} head {hd} {value:.4f}" for lay, hd, value in differences.diff.most_changed()))


COMMAND = Command(
    task="attention", help="attention weights of every layer and head",
    add_arguments=_arguments, inputs=_inputs, print_result=_print, print_differences=_print_differences,
    json_result=_json, json_differences=_json_differences, after_run=_after_run,
)

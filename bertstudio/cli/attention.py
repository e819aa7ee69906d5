"""bertstudio attention --model SRC "text" [--pair "B"] [--layer L --head H] [--compare SRC2] [--out FILE | --json]"""

from __future__ import annotations

import argparse
import sys

from bertstudio.cli.common import add_model_options, load_for, load_second, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("attention", help="attention weights of every layer and head")
    add_model_options(parser, "attention")
    parser.add_argument("text", help="the text (sentence A)")
    parser.add_argument("--pair", metavar="B", default=None, help="a second sentence (B): segment ids are set")
    parser.add_argument("--layer", type=int, default=None, help="only this layer (0-based; needs --head)")
    parser.add_argument("--head", type=int, default=None, help="only this head (0-based; needs --layer)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help=".npz (attentions: layers x heads x T x T, tokens), .csv or .json")
    parser.add_argument("--compare", metavar="SRC2", default=None,
                        help="a second model run on the same input: adds its attentions and B - A per head")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.errors import InputError
    from bertstudio.core.tasks.attention import compare_attention, compute
    from bertstudio.core.tasks.attention_export import check_json_size, comparison_json, save, to_json

    if (args.layer is None) != (args.head is None):
        raise InputError("Give both --layer and --head, or neither.")
    if args.out and not args.out.lower().endswith((".npz", ".csv", ".json")):
        raise InputError(f"Cannot write '{args.out}': use a .npz, .csv or .json file name.")
    loaded = load_for(args, "attention", "eager")
    result = compute(loaded, args.text, args.pair)
    for note in (result.truncation.message if result.truncation else "", result.note):
        if note:
            print(f"warning: {note}", file=sys.stderr)
    if args.layer is not None:
        result.head(args.layer, args.head)  # a clear error for a head that does not exist
    comparison = None
    if args.compare:
        if args.out and args.out.lower().endswith(".csv"):
            raise InputError("A comparison cannot be written as CSV.", hint="Use a .npz or .json file name.")
        other = load_second(args, "attention", "eager")
        comparison = compare_attention(result, compute(other, args.text, args.pair), args.compare)
        if comparison.message:
            print(f"warning: {comparison.message}", file=sys.stderr)
        if args.layer is not None and comparison.diff is not None:
            comparison.result.head(args.layer, args.head)
    if args.out:
        save(args.out, result, args.layer, args.head, comparison, args.model)
    if args.json:
        check_json_size(result, args.layer, args.head)
        if comparison is None:
            print_json(to_json(result, args.layer, args.head))
        else:
            check_json_size(comparison.result, args.layer, args.head)
            print_json(comparison_json(args.model, result, comparison, args.layer, args.head))
        return 0
    if comparison is not None and comparison.diff is not None:
        print("most changed heads (B - A, mean |difference|): " + ", ".join(
            f"layer {lay} head {hd} {value:.4f}" for lay, hd, value in comparison.diff.most_changed()))
    if args.out:
        what = (f"{result.layers} layers x {result.heads} heads" if args.layer is None
                else f"layer {args.layer} head {args.head}")
        print(f"wrote {args.out}: {what} x {result.length} tokens")
    else:
        print(f"{result.layers} layers x {result.heads} heads, {result.length} tokens: {' '.join(result.tokens)}")
        print("Use --out FILE (.npz/.csv/.json) or --json to get the weights.")
    return 0

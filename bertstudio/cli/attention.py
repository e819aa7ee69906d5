"""bertstudio attention --model SRC "text" [--pair "B"] [--layer L --head H] [--out FILE | --json]"""

from __future__ import annotations

import argparse
import sys

from bertstudio.cli.common import add_model_options, load_for, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("attention", help="attention weights of every layer and head")
    add_model_options(parser, "attention")
    parser.add_argument("text", help="the text (sentence A)")
    parser.add_argument("--pair", metavar="B", default=None, help="a second sentence (B): segment ids are set")
    parser.add_argument("--layer", type=int, default=None, help="only this layer (0-based; needs --head)")
    parser.add_argument("--head", type=int, default=None, help="only this head (0-based; needs --layer)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help=".npz (attentions: layers x heads x T x T, tokens), .csv or .json")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.errors import InputError
    from bertstudio.core.tasks.attention import compute
    from bertstudio.core.tasks.attention_export import check_json_size, save, to_json

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
    if args.out:
        save(args.out, result, args.layer, args.head)
    if args.json:
        check_json_size(result, args.layer, args.head)
        print_json(to_json(result, args.layer, args.head))
        return 0
    if args.out:
        what = (f"{result.layers} layers x {result.heads} heads" if args.layer is None
                else f"layer {args.layer} head {args.head}")
        print(f"wrote {args.out}: {what} x {result.length} tokens")
    else:
        print(f"{result.layers} layers x {result.heads} heads, {result.length} tokens: {' '.join(result.tokens)}")
        print("Use --out FILE (.npz/.csv/.json) or --json to get the weights.")
    return 0

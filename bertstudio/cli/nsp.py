"""bertstudio nsp --model SRC "sentence A" "sentence B" [more B...] [--json]

Label 0 = IsNext (B continues A), label 1 = NotNext (B is random). With several B's the
candidates are ranked by P(IsNext).
"""

from __future__ import annotations

import argparse
import sys

from bertstudio.cli.common import add_model_options, load_for, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "nsp", help="next-sentence prediction: does B continue A? (several B's: ranked)",
        description="P(IsNext) (label 0: B continues A) and P(NotNext) (label 1: B is random).",
    )
    add_model_options(parser, "nsp")
    parser.add_argument("sentence_a", metavar="A", help="the first sentence")
    parser.add_argument("sentences_b", metavar="B", nargs="+", help="one or more candidate next sentences")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.tasks.nsp import predict, rank, require_nsp_head

    loaded = load_for(args, "nsp")
    require_nsp_head(loaded)
    if len(args.sentences_b) == 1:
        result = predict(loaded, args.sentence_a, args.sentences_b[0])
        if result.truncated:
            print(f"warning: the pair is longer than {loaded.info.max_length} tokens and was cut", file=sys.stderr)
        if args.json:
            print_json(result.to_json())
        else:
            print(f"P(IsNext)  = {result.is_next:.4f}   (label 0: B continues A)")
            print(f"P(NotNext) = {result.not_next:.4f}   (label 1: B is random)")
            print(f"logits     = [{result.logits[0]:.4f}, {result.logits[1]:.4f}]")
        return 0
    ranking = rank(loaded, args.sentence_a, args.sentences_b)
    if ranking.truncation_message:
        print(f"warning: {ranking.truncation_message}", file=sys.stderr)
    if args.json:
        print_json(ranking.to_json())
        return 0
    print("P(IsNext)  candidate B (label 0 = B continues A)")
    for r in ranking.results:
        print(f"  {r.is_next:7.2%}  {r.sentence_b}")
    return 0

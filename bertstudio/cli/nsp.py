"""bertstudio nsp --model SRC "sentence A" "sentence B" [more B...] [--compare SRC2] [--json]

Label 0 = IsNext (B continues A), label 1 = NotNext (B is random). With several B's the
candidates are ranked by P(IsNext). --compare runs a second model on the same sentences and
adds its result and the differences (changed top label / rank changes, probability deltas).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bertstudio.cli.common import add_model_options, load_for, load_second, show_comparison, show_result


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "nsp", help="next-sentence prediction: does B continue A? (several B's: ranked)",
        description="P(IsNext) (label 0: B continues A) and P(NotNext) (label 1: B is random).",
    )
    add_model_options(parser, "nsp")
    parser.add_argument("sentence_a", metavar="A", help="the first sentence")
    parser.add_argument("sentences_b", metavar="B", nargs="+", help="one or more candidate next sentences")
    parser.add_argument("--compare", metavar="SRC2", help="a second NSP model to run on the same sentences and compare")
    parser.set_defaults(func=run)


def _predict(loaded: Any, args: argparse.Namespace) -> Any:
    from bertstudio.core.tasks.nsp import predict, rank, require_nsp_head

    require_nsp_head(loaded)
    if len(args.sentences_b) == 1:
        result = predict(loaded, args.sentence_a, args.sentences_b[0])
        if result.truncated:
            print(f"warning: the pair is longer than {loaded.info.max_length} tokens and was cut", file=sys.stderr)
        return result
    ranking = rank(loaded, args.sentence_a, args.sentences_b)
    if ranking.truncation_message:
        print(f"warning: {ranking.truncation_message}", file=sys.stderr)
    return ranking


def _print(result: Any) -> None:
    if hasattr(result, "results"):
        print("P(IsNext)  candidate B (label 0 = B continues A)")
        for r in result.results:
            print(f"  {r.is_next:7.2%}  {r.sentence_b}")
        return
    print(f"P(IsNext)  = {result.is_next:.4f}   (label 0: B continues A)")
    print(f"P(NotNext) = {result.not_next:.4f}   (label 1: B is random)")
    print(f"logits     = [{result.logits[0]:.4f}, {result.logits[1]:.4f}]")


def _print_differences(diff: Any, ranked: bool) -> None:
    print("\ndifferences (B - A):")
    if diff.top_changed:
        print(f"  top changed: {diff.top_a} -> {diff.top_b}")
    else:
        print(f"  top unchanged: {diff.top_a}")
    for d in diff.deltas:
        delta = "" if d.delta is None else f"{d.delta:+.4f}"
        moved = f"  rank {d.rank_a} -> {d.rank_b}" if ranked and d.rank_a != d.rank_b else ""
        print(f"  {delta:>8}  {d.label}{moved}")


def run(args: argparse.Namespace) -> int:
    loaded = load_for(args, "nsp")
    result = _predict(loaded, args)
    if not args.compare:
        return show_result(args, result, _print)
    other = load_second(args, "nsp")
    second = _predict(other, args)
    from bertstudio.core.tasks.nsp import compare

    diff = compare(result, second)
    if show_comparison(args, result, second, diff.to_json(), _print):
        return 0
    _print_differences(diff, hasattr(result, "results"))
    return 0

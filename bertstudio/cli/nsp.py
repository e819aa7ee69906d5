"""bertstudio nsp --model SRC "sentence A" "sentence B" [more B...] [--compare SRC2] [--json]

Label 0 = IsNext (B continues A), label 1 = NotNext (B is random). With several B's the
candidates are ranked by P(IsNext). --compare runs a second model on the same sentences and
adds its result and the differences (changed top label / rank changes, probability deltas).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bertstudio.cli._inputs import add_parts
from bertstudio.cli.common import ranking_differences
from bertstudio.cli.task_command import Command

if TYPE_CHECKING:
    from bertstudio.core.tasks.nsp import NspInput, NspRanking, NspResult


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_parts(parser, "nsp")


def _inputs(args: argparse.Namespace) -> NspInput:
    from bertstudio.core.tasks.nsp import NspInput

    return NspInput(args.sentence_a, tuple(args.sentences_b))


def _print(result: NspResult | NspRanking) -> None:
    if hasattr(result, "results"):
        print("P(IsNext)  candidate B (label 0 = B continues A)")
        for r in result.results:
            print(f"  {r.is_next:7.2%}  {r.sentence_b}")
        return
    print(f"P(IsNext)  = {result.is_next:.4f}   (label 0: B continues A)")
    print(f"P(NotNext) = {result.not_next:.4f}   (label 1: B is random)")
    print(f"logits     = [{result.logits[0]:.4f}, {result.logits[1]:.4f}]")


COMMAND = Command(
    task="nsp", help="next-sentence prediction: does B continue A? (several B's: ranked)",
    description="P(IsNext) (label 0: B continues A) and P(NotNext) (label 1: B is random).",
    add_arguments=_arguments, inputs=_inputs, print_result=_print, print_differences=ranking_differences("top"),
    onnx=True,
)

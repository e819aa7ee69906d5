"""bertstudio similarity --model SRC [--pooling mean|cls] "sentence A" "sentence B" [more B...] [--json]

The cosine of A's embedding with each B's (-1..1), in the order given. "mean" pooling averages the
last hidden state over the attention mask (sentence-transformers' definition for
all-MiniLM-L6-v2); "cls" takes the first token's state. --compare runs a second model on the same
sentences and adds its cosines and the differences (best match changed, rank moves).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bertstudio.cli._inputs import add_parts
from bertstudio.cli.common import ranking_differences
from bertstudio.cli.task_command import Command

if TYPE_CHECKING:
    from bertstudio.core.tasks.similarity import SimilarityInput, SimilarityResult

POOLINGS = ("mean", "cls")  # core.tasks.similarity.POOLINGS (not imported: the CLI's help stays light)


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_parts(parser, "similarity")
    parser.add_argument("--pooling", choices=POOLINGS, default="mean",
                        help="mean: average over the attention mask (sentence-transformers); cls: the first token")


def _inputs(args: argparse.Namespace) -> SimilarityInput:
    from bertstudio.core.tasks.similarity import SimilarityInput, check_inputs

    inputs = SimilarityInput(args.sentence_a, tuple(args.sentences_b), args.pooling)
    check_inputs(inputs)  # before any model is loaded
    return inputs


def _print(result: SimilarityResult) -> None:
    print(f"cosine   sentence B ({result.pooling} pooling; A: {result.a})")
    for s in result.scores:
        print(f"{s.score:+.4f}  {s.text}")


COMMAND = Command(
    task="similarity", help="sentence similarity: cosine of A's embedding with each B's",
    description="Cosine (-1..1) of mean-pooled (or [CLS]) embeddings, A against each B in the order given.",
    add_arguments=_arguments, inputs=_inputs, print_result=_print,
    print_differences=ranking_differences("most similar"),
)

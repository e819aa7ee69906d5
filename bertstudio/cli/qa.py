"""bertstudio qa --model SRC --question Q (--context C | --context-file F) [--top-k K] [--compare SRC2] [--json]

--compare runs a second QA model on the same question and context and adds its answers and
the differences of the two best answers (changed span, character overlap, score delta).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bertstudio.cli._inputs import add_parts, values
from bertstudio.cli.task_command import Command

if TYPE_CHECKING:
    from bertstudio.core.tasks.qa import QAInput, QAResult
    from bertstudio.core.tasks.qa.spans import SpanDiff


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_parts(parser, "qa")
    parser.add_argument("--top-k", type=int, default=1, help="answers to return (default 1)")
    parser.add_argument("--max-answer-len", type=int, default=15, help="longest answer in tokens (default 15)")
    parser.add_argument("--doc-stride", type=int, default=128,
                        help="tokens shared by consecutive windows of a long context (default 128)")
    parser.add_argument("--max-seq-len", type=int, default=384, help="tokens per window (default 384)")
    parser.add_argument("--allow-no-answer", action="store_true",
                        help="the empty answer may win (SQuAD 2.0 models)")
    parser.add_argument("--null-threshold", type=float, default=0.0,
                        help="with --allow-no-answer: the null score must beat the best span by this much")


def _inputs(args: argparse.Namespace) -> QAInput:
    from bertstudio.core.tasks.qa import QAInput, QAOptions
    from bertstudio.core.tasks.spec import spec_for

    options = QAOptions(
        top_k=args.top_k, max_answer_len=args.max_answer_len, doc_stride=args.doc_stride,
        max_seq_len=args.max_seq_len, allow_no_answer=args.allow_no_answer, null_threshold=args.null_threshold,
    )
    options.validate()
    question, context = (values(args, part)[0] for part in spec_for("qa").parts)
    return QAInput(question, context, options)


def _print(result: QAResult) -> None:
    for rank, item in enumerate(result.answers, start=1):
        text = item.answer if not item.is_null else "(no answer)"
        print(f"{rank:>3}. {item.score:7.2%}  {text}  [{item.start}:{item.end}]")


def _print_differences(diff: SpanDiff) -> None:
    if diff.changed:
        print(f"  span changed: {diff.span_a} '{diff.text_a}' -> {diff.span_b} '{diff.text_b}'")
    else:
        print(f"  span unchanged: {diff.span_a} '{diff.text_a}'")
    print(f"  overlap {diff.overlap:.0%}")
    if diff.score_delta is not None:
        print(f"  score {diff.score_delta:+.4f}")


COMMAND = Command(
    task="qa", help="extractive question answering: the best spans of a context",
    add_arguments=_arguments, inputs=_inputs, print_result=_print, print_differences=_print_differences,
    differences_title="differences (B - A), best answers",
)

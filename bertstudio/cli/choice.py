"""bertstudio choice --model SRC --prompt P --choice A --choice B ... [--compare SRC2] [--json]"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bertstudio.cli._inputs import add_parts
from bertstudio.cli.task_command import Command

if TYPE_CHECKING:
    from bertstudio.core.compare import RankingDiff
    from bertstudio.core.tasks.multiple_choice import ChoiceInput, ChoiceResult


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_parts(parser, "multiple-choice")


def _inputs(args: argparse.Namespace) -> ChoiceInput:
    from bertstudio.core.tasks.multiple_choice import ChoiceInput

    return ChoiceInput(args.prompt, tuple(args.choice))


def _print(result: ChoiceResult) -> None:
    for choice in result.choices:
        print(f"  {choice.score:8.2%}  {choice.choice}")


def _print_differences(diff: RankingDiff) -> None:
    top = f"best changed: {diff.top_a} -> {diff.top_b}" if diff.top_changed else f"best unchanged: {diff.top_a}"
    print(f"  {top}; largest score change {diff.max_abs_delta:+.4f}")


COMMAND = Command(
    task="multiple-choice", help="multiple choice: the probability of each ending of a prompt",
    add_arguments=_arguments, inputs=_inputs, print_result=_print, print_differences=_print_differences,
)

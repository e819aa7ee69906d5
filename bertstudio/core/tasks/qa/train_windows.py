"""How many windows a QA context becomes, bounded before anything is tokenized whole.

A context longer than the maximum length is split into overlapping windows, one training row
each. Their number comes from the file: one context of 100,000 sentences shared by 40 questions
was 40 x ~6,000 windows, tokenized in one call that neither reported progress nor honoured
Ctrl+C and grew past 14 GB. So every question's windows are counted first, from token counts
taken piece by piece (with a Cancel check between pieces, stopping as soon as the bound is
passed), and a question over MAX_WINDOWS_PER_QUESTION, or a file over MAX_WINDOWS in all, is
refused with its line before the windows are made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.limits import MAX_ROWS
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.qa.train_read import QAExample
from bertstudio.core.training import data as data_mod
from bertstudio.core.training.events import preparing

MAX_WINDOWS_PER_QUESTION = 128  # a SQuAD context is 1-4 windows of 384 tokens, a long document dozens
MAX_WINDOWS = MAX_ROWS  # windows of one file in all (training rows)
COUNT_PIECE = 1 << 16  # characters of a long context tokenized at once while counting its tokens
PIECES_PER_CALL = 16  # pieces per tokenizer call: a Cancel check and a progress line between calls
QUESTION_CHUNK = 4096  # questions whose tokens are counted at once


def window_stride(max_length: int) -> int:
    """Tokens two neighbouring windows share (run_qa.py: 128 of 384)."""
    return max(1, max_length // 4)


def question_lengths(tokenizer: Any, rows: Sequence[QAExample], max_length: int,
                     control: TaskControl | None = None) -> list[int]:
    """Each question's tokens (QUESTION_CHUNK at a time, a Cancel check between); one that leaves no room
    for its context in a window is a numbered issue."""
    room = max_length - window_stride(max_length) - 4
    lengths: list[int] = []
    for first in range(0, len(rows), QUESTION_CHUNK):
        chunk = [r.question.lstrip() for r in rows[first:first + QUESTION_CHUNK]]
        lengths += [len(ids) for ids in tokenizer(chunk, add_special_tokens=False)["input_ids"]]
        if control is not None:
            control.check()
    issues = [data_mod.RowIssue(r.line, f"the question is {n} tokens: with the maximum length {max_length} at most "
                                f"{room} leave room for the context")
              for r, n in zip(rows, lengths, strict=True) if n > room]
    if issues:
        data_mod.raise_issues(Path("the data file"), issues)
    return lengths


def windows_for(context_tokens: int, question_tokens: int, max_length: int, specials: int) -> int:
    """The windows the tokenizer makes of a context (return_overflowing_tokens with window_stride)."""
    room = max_length - question_tokens - specials
    if context_tokens <= room:
        return 1
    return 1 + math.ceil((context_tokens - room) / (room - window_stride(max_length)))


def most_tokens(question_tokens: int, max_length: int, specials: int) -> int:
    """The most context tokens that still fit in MAX_WINDOWS_PER_QUESTION windows."""
    room = max_length - question_tokens - specials
    return room + (MAX_WINDOWS_PER_QUESTION - 1) * (room - window_stride(max_length))


def _pieces(text: str) -> list[str]:
    """`text` cut into pieces of about COUNT_PIECE characters at white space (words stay whole)."""
    pieces, at = [], 0
    while at < len(text):
        end = min(len(text), at + COUNT_PIECE)
        if end < len(text):
            space = text.rfind(" ", at + COUNT_PIECE // 2, end)
            end = space if space > at else end
        pieces.append(text[at:end])
        at = end
    return pieces


def count_tokens(tokenizer: Any, text: str, up_to: int, control: TaskControl | None) -> int:
    """The tokens of `text` (counted piece by piece, so cut at most by a token at each cut), or the
    count so far once it passes `up_to`. Cheap where it cannot pass: no tokenizer makes more tokens
    than the text has UTF-8 bytes (plus a leading word marker)."""
    if len(text.encode("utf-8", "surrogatepass")) + 2 <= up_to:
        return -1  # within the bound, uncounted: the windows are made and counted exactly anyway
    pieces, total = _pieces(text), 0
    for first in range(0, len(pieces), PIECES_PER_CALL):
        batch = pieces[first:first + PIECES_PER_CALL]
        total += sum(len(ids) for ids in tokenizer(batch, add_special_tokens=False)["input_ids"])
        if control is not None:
            control.check()
        if total > up_to:
            break
    return total


def check_windows(tokenizer: Any, rows: Sequence[QAExample], max_length: int,
                  control: TaskControl | None = None) -> list[int]:
    """Refuse a question whose context makes more than MAX_WINDOWS_PER_QUESTION windows, or a file of more
    than MAX_WINDOWS, before the windows are made; returns the questions' token counts."""
    preparing(control, f"Counting the tokens of {len(rows):,} questions…")
    lengths = question_lengths(tokenizer, rows, max_length, control)
    specials = tokenizer.num_special_tokens_to_add(pair=True)
    longest: dict[str, int] = {}  # context -> its longest question (the one with least room)
    for row, n in zip(rows, lengths, strict=True):
        longest[row.context] = max(n, longest.get(row.context, 0))
    counted: dict[str, int] = {}
    for number, (context, question) in enumerate(longest.items()):
        if number % 256 == 0:
            preparing(control, f"Counting the windows of {len(longest):,} context(s)…", number / len(longest))
        counted[context] = count_tokens(tokenizer, context, most_tokens(question, max_length, specials), control)
    over, total = [], 0
    for row, n in zip(rows, lengths, strict=True):
        tokens = counted[row.context]
        windows = 1 if tokens < 0 else windows_for(tokens, n, max_length, specials)
        total += windows
        if windows > MAX_WINDOWS_PER_QUESTION:
            over.append((row.line, windows, tokens))
    refuse_too_many(over, max_length)
    if total > MAX_WINDOWS:
        raise InputError(f"The questions make more than {MAX_WINDOWS:,} windows of {max_length} tokens in all.",
                         hint="Train on fewer or shorter contexts (split the file), or raise --max-length.")
    return lengths


def refuse_too_many(over: Sequence[tuple[int, int, int]], max_length: int) -> None:
    """One message for the questions (line, windows, tokens counted or -1) over the bound: many questions
    often share one long context, so each is a line and a number, and what to do is said once."""
    if not over:
        return
    shown = ", ".join(f"line {line} ({windows:,}" + (f" windows, at least {tokens:,} tokens)" if tokens >= 0
                                                     else " windows)") for line, windows, tokens in over[:8])
    more = f" and {len(over) - 8:,} more" if len(over) > 8 else ""
    raise InputError(f"{len(over):,} question(s) have a context that makes more than the {MAX_WINDOWS_PER_QUESTION} "
                     f"windows of {max_length} tokens one question may take: {shown}{more}.",
                     hint="Shorten each context to the passage around its answer (split long documents), or raise "
                          "--max-length.")

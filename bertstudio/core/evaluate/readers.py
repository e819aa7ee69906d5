"""Labelled files for evaluation, one reader per task (its spec's EvaluateAdapter names it), with
line-numbered errors as `train` gives.

Table files (CSV/TSV/JSONL) and CoNLL are read by the training readers, so a file that trains
also evaluates and a bad row is reported the same way. What is added: the tasks training has
no reader for (QA as SQuAD JSON or CSV, masked-LM text, NSP pairs, multiple choice), and every
other column of a table kept per row, so metrics can be sliced by it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bertstudio.core.datafiles import first_line_header, read_lines, read_table, tick
from bertstudio.core.errors import InputError
from bertstudio.core.files import regular_file
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.multiple_choice import CHOICE_COLUMN
from bertstudio.core.training.data import (
    Columns,
    RowIssue,
    classification_rows,
    detect_columns,
    raise_issues,
    read_conll,
)

QUESTION_NAMES = ("question", "query", "q")
CONTEXT_NAMES = ("context", "passage", "paragraph", "document", "text")
ANSWER_NAMES = ("answer", "answers", "answer_text", "gold", "target")
SENTENCE_A_NAMES = ("sentence_a", "text_a", "sentence1", "first", "a", "text")
SENTENCE_B_NAMES = ("sentence_b", "text_b", "sentence2", "second", "b", "text_pair", "next")
NSP_LABEL_NAMES = ("label", "is_next", "next_label", "labels", "y")
PROMPT_NAMES = ("prompt", "question", "startphrase", "sentence", "context", "goal", "text")
CHOICE_LABEL_NAMES = ("label", "answer", "correct", "answer_index", "target", "labels")
IS_NEXT, NOT_NEXT = "IsNext", "NotNext"
_NSP_WORDS = {"0": IS_NEXT, "isnext": IS_NEXT, "1": NOT_NEXT, "notnext": NOT_NEXT}


@dataclass(frozen=True)
class EvalColumns:
    """Which columns hold what; None = detected from well-known names."""

    text: str | None = None  # classification text, NSP sentence A
    pair: str | None = None  # classification second text, NSP sentence B
    label: str | None = None  # classification label, NSP label, choice index
    question: str | None = None
    context: str | None = None
    answer: str | None = None
    prompt: str | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Example:
    """One labelled row. `inputs` and `gold` are task-shaped (see each reader)."""

    line: int  # where it starts in the file (1-based), for messages
    text: str  # what a person reads in tables and the projector's hover
    inputs: Any
    gold: Any
    fields: Mapping[str, str] = field(default_factory=dict)  # the row's other columns, for slices


@dataclass(frozen=True)
class Dataset:
    task: str  # spec key
    path: str
    examples: tuple[Example, ...]
    columns: tuple[str, ...] = ()  # the extra columns a user can slice by
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.examples)

    def limited(self, limit: int | None) -> Dataset:
        """The first `limit` rows (the CLI's --limit)."""
        if not limit or limit >= len(self.examples):
            return self
        if limit < 0:
            raise InputError(f"--limit must be positive, not {limit}.")
        return replace(self, examples=self.examples[:limit])


def pick_column(header: Sequence[str], given: str | None, names: Sequence[str], what: str, path: Path,
          avoid: Sequence[str | None] = ()) -> str:
    """The column the user named (checked) or the first well-known name in the header."""
    if given:
        if given not in header:
            raise InputError(f"{path.name} has no column '{given}'.", hint=f"Its columns: {', '.join(header)}.")
        return given
    lower = {h.lower(): h for h in header if h not in avoid}
    for name in names:
        if name in lower:
            return lower[name]
    raise InputError(f"{path.name} has no {what} column (looked for: {', '.join(names)}).",
                     hint=f"Its columns: {', '.join(header)}. Name the column with the {what} option.")


def extra_fields(row: Mapping[str, Any], used: Sequence[str | None]) -> dict[str, str]:
    return {k: "" if v is None else str(v) for k, v in row.items() if k not in used and not isinstance(v, list | dict)}


def table_rows(path: Path, control: TaskControl | None) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    """Header and well-formed rows; malformed ones stop the run with their line numbers."""
    header, rows = read_table(path, control=control)
    raise_issues(path, [RowIssue(line, problem) for line, row, problem in rows if row is None])
    return header, [(line, row) for line, row, _ in rows if row is not None]


def finish_dataset(path: Path, examples: list[Example], issues: list[RowIssue], used: Sequence[str | None],
            header: Sequence[str]) -> Dataset:
    raise_issues(path, issues)
    if not examples:
        raise InputError(f"{path.name} has no examples.", hint="Add rows under the header.")
    columns = tuple(h for h in header if h not in used)
    return Dataset("", str(path), tuple(examples), columns)  # `read_dataset` names the task


# -- classification -----------------------------------------------------------------------------
def read_classification_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (text, pair or None), gold = label text. The training reader checks every row."""
    chosen = None
    header, table = read_table(path, control=control)
    if columns.text or columns.label or columns.pair:
        guess = detect_columns(header)
        chosen = Columns(text=columns.text or guess.text, label=columns.label or guess.label,
                         text_pair=columns.pair or (guess.text_pair if not columns.text else None))
    data = classification_rows(path, header, table, chosen, control)
    by_line = {line: row for line, row, _ in table if row is not None}
    used = (data.columns.text, data.columns.label, data.columns.text_pair)
    examples = []
    for i, (text, label, line) in enumerate(zip(data.texts, data.labels, data.lines, strict=True)):
        tick(control, i)
        pair = data.pairs[i] if data.pairs is not None else None
        shown = f"{text} ||| {pair}" if pair else text
        examples.append(Example(line, shown, (text, pair), label, extra_fields(by_line.get(line, {}), used)))
    return finish_dataset(path, examples, [], used, header)


# -- token classification -----------------------------------------------------------------------
def read_ner_file(path: Path, _columns: EvalColumns | None = None, control: TaskControl | None = None) -> Dataset:
    """inputs = words, gold = IOB2 tags (CoNLL: 'word ... tag' per line, blank line between sentences)."""
    sentences = read_conll(path, control)
    issues = []
    for sentence in sentences:
        for offset, (previous, tag) in enumerate(zip(("O",) + sentence.tags, sentence.tags, strict=False)):
            if tag.startswith("I-") and previous[2:] != tag[2:]:
                issues.append(RowIssue(sentence.line + offset, f"tag '{tag}' follows '{previous}': IOB2 starts an "
                                       "entity with B-"))
    raise_issues(path, issues)
    examples = [Example(s.line, " ".join(s.tokens), s.tokens, s.tags) for s in sentences]
    return Dataset("", str(path), tuple(examples))


# -- question answering ---------------------------------------------------------------------------
def _squad(path: Path) -> Dataset:
    from bertstudio.core.evaluate.squad import read_squad

    questions, problems = read_squad(path)
    raise_issues(path, [RowIssue(line, problem) for line, problem in problems])
    examples = [Example(q.line, q.question, (q.question, q.context), q.answers, {"title": q.title} if q.title else {})
                for q in questions]
    return finish_dataset(path, examples, [], (), ("title",) if any(x.fields for x in examples) else ())


def read_qa_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (question, context), gold = answer texts (empty: no answer). SQuAD JSON, or a table."""
    if path.suffix.lower() == ".json":
        return _squad(path)
    header, rows = table_rows(path, control)
    question = pick_column(header, columns.question, QUESTION_NAMES, "question", path)
    context = pick_column(header, columns.context, CONTEXT_NAMES, "context", path, (question,))
    answer = pick_column(header, columns.answer, ANSWER_NAMES, "answer", path, (question, context))
    examples, issues = [], []
    for line, row in rows:
        tick(control, line)
        q, c, a = (str(row.get(name) or "").strip() for name in (question, context, answer))
        if not q or not c:
            issues.append(RowIssue(line, f"empty {'question' if not q else 'context'}"))
            continue
        value = row.get(answer)
        golds = tuple(str(v) for v in value) if isinstance(value, list) else ((a,) if a else ())
        if a and not isinstance(value, list) and a.lower() not in c.lower():
            issues.append(RowIssue(line, f"the answer '{a}' is not in the context"))
            continue
        examples.append(Example(line, q, (q, c), golds, extra_fields(row, (question, context, answer))))
    return finish_dataset(path, examples, issues, (question, context, answer), header)


# -- masked LM, NSP, multiple choice --------------------------------------------------------------
def read_text_file(path: Path, _columns: EvalColumns | None = None, control: TaskControl | None = None) -> Dataset:
    """inputs = one text per non-blank line, gold = None (the masked tokens are the gold)."""
    examples = [Example(n, line, line, None) for n, line in read_lines(path, "data file", control=control)]
    bad = [RowIssue(x.line, "control characters in the line (is this a binary file?)")
           for x in examples if any(ord(c) < 32 and c != "\t" for c in x.text)]
    return finish_dataset(path, examples, bad, (), ())


def nsp_label(value: Any) -> str | None:
    """'0'/'IsNext' -> IsNext, '1'/'NotNext' -> NotNext (BERT's labels); None for anything else."""
    return _NSP_WORDS.get(re.sub(r"[^a-z0-9]", "", str(value).lower()))


@dataclass(frozen=True)
class PairFile:
    """A file of text pairs with a gold value each (NSP's label, an STS score): each column's name
    in messages and the names it is found by when none is given, how a gold cell reads (None: it
    cannot) and the two row messages. One shape, so NSP and similarity read pairs alike."""

    first: tuple[str, tuple[str, ...]]  # (what a message calls it, the names it is found by)
    second: tuple[str, tuple[str, ...]]
    gold: tuple[str, tuple[str, ...]]
    gold_of: Callable[[Any], Any]
    empty: str  # the issue of a row with an empty text
    bad_gold: str  # the issue of a gold value gold_of cannot read, "{value}" in it


def read_pairs(path: Path, columns: EvalColumns, control: TaskControl | None, kind: PairFile) -> Dataset:
    """inputs = (first, second), gold = kind.gold_of(the gold cell); the columns are the ones given
    (text, pair, label) or found by kind's names, each distinct; a bad row is a numbered issue."""
    header, rows = table_rows(path, control)
    gold_column = pick_column(header, columns.label, kind.gold[1], kind.gold[0], path)
    first = pick_column(header, columns.text, kind.first[1], kind.first[0], path, (gold_column,))
    second = pick_column(header, columns.pair, kind.second[1], kind.second[0], path, (gold_column, first))
    names = (first, second, gold_column)
    examples, issues = [], []
    for line, row in rows:
        tick(control, line)
        a, b = str(row.get(first) or "").strip(), str(row.get(second) or "").strip()
        gold = kind.gold_of(row.get(gold_column, ""))
        if not a or not b:
            issues.append(RowIssue(line, kind.empty))
        elif gold is None:
            issues.append(RowIssue(line, kind.bad_gold.format(value=row.get(gold_column))))
        else:
            examples.append(Example(line, f"{a} ||| {b}", (a, b), gold, extra_fields(row, names)))
    return finish_dataset(path, examples, issues, names, header)


NSP_FILE = PairFile(("sentence A", SENTENCE_A_NAMES), ("sentence B", SENTENCE_B_NAMES), ("label", NSP_LABEL_NAMES),
                    nsp_label, "empty sentence A or B", "label '{value}' is not 0/IsNext or 1/NotNext")


def read_nsp_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (sentence A, sentence B), gold = IsNext / NotNext (label 0 / 1 as BERT was trained)."""
    return read_pairs(path, columns, control, NSP_FILE)


def _choice_columns(header: Sequence[str], given: Sequence[str], path: Path) -> tuple[str, ...]:
    if given:
        for name in given:
            pick_column(header, name, (), "choice", path)
        return tuple(given)
    numbered = sorted((int(m.group(2)), h) for h in header if (m := CHOICE_COLUMN.match(h)))
    if len(numbered) == 1 and "choices" not in header:  # issue 32 #13c: "no choice columns" was untrue
        raise InputError(f"{path.name} has one choice column ('{numbered[0][1]}'): a multiple-choice question "
                         "needs at least two choices.", hint="Add the other choices (choice1, choice2…).")
    if not numbered and "choices" not in header:
        raise InputError(f"{path.name} has no choice columns (choice0, choice1… or ending0, ending1…).",
                         hint="Name them with the choice-columns option.")
    return tuple(h for _, h in numbered) or ("choices",)


def read_choice_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (prompt, choices), gold = the correct choice's 0-based index."""
    header, rows = table_rows(path, control)
    choices = _choice_columns(header, columns.choices, path)
    label = pick_column(header, columns.label, CHOICE_LABEL_NAMES, "label", path, choices)
    prompt = pick_column(header, columns.prompt or columns.text, PROMPT_NAMES, "prompt", path, (*choices, label))
    examples, issues = [], []
    for line, row in rows:
        tick(control, line)
        text = str(row.get(prompt) or "").strip()
        listed = row.get("choices") if choices == ("choices",) else [row.get(c) for c in choices]
        options = tuple(str(c).strip() for c in (listed if isinstance(listed, list) else []) if str(c or "").strip())
        raw = str(row.get(label, "")).strip()
        if not text or len(options) < 2:
            issues.append(RowIssue(line, "needs a prompt and at least two choices"))
        elif not raw.lstrip("-").isdigit() or not 0 <= int(raw) < len(options):
            issues.append(RowIssue(line, f"label '{raw}' is not a choice index 0..{len(options) - 1}"))
        else:
            extra = extra_fields(row, (prompt, label, *choices))
            examples.append(Example(line, text, (text, options), int(raw), extra))
    return finish_dataset(path, examples, issues, (prompt, label, *choices), header)


def read_dataset(task: str, path: str | Path, columns: EvalColumns | None = None,
                 control: TaskControl | None = None) -> Dataset:
    """The labelled examples of `path` for the task `task` (a spec key); `control` is checked
    every few thousand rows (a big file takes seconds to read)."""
    from bertstudio.core.evaluate.adapters import adapter_for

    path = regular_file(path, "data file")  # a FIFO, a device, a folder: said before anything is read
    dataset = adapter_for(task).read(path, columns or EvalColumns(), control)  # the spec's reader
    return replace(dataset, task=task)


def header_of(path: str | Path) -> list[str]:
    """The column names of a table file from its first line only (cheap enough for the GUI thread:
    at most 64 KiB read, special files give no columns)."""
    return first_line_header(path)

"""Evaluate for Question answering: SQuAD JSON or a question/context/answer table, the best answer per
question (`tasks.qa.answer`; the empty answer may win where some questions have none), and the
official SQuAD exact match and F1."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.datafiles import tick
from bertstudio.core.evaluate import readers
from bertstudio.core.evaluate.metrics import Scores
from bertstudio.core.evaluate.predict import EvalOptions, Prediction, progress
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.qa import QAInput, QAOptions, postprocess, preprocess, require_span_head, window_logits

QUESTION_NAMES = ("question", "query", "q")
CONTEXT_NAMES = ("context", "passage", "paragraph", "document", "text")
ANSWER_NAMES = ("answer", "answers", "answer_text", "gold", "target")


def _squad(path: Path) -> readers.Dataset:
    from bertstudio.core.tasks.qa.squad import read_squad
    from bertstudio.core.training.data import RowIssue, raise_issues

    questions, problems = read_squad(path)
    raise_issues(path, [RowIssue(line, problem) for line, problem in problems])
    examples = [readers.Example(q.line, q.question, (q.question, q.context), q.answers,
                                {"title": q.title} if q.title else {}) for q in questions]
    return readers.finish_dataset(path, examples, [], (), ("title",) if any(x.fields for x in examples) else ())



def read_file(path: Path, columns: readers.EvalColumns, control: TaskControl | None = None) -> readers.Dataset:
    """inputs = (question, context), gold = answer texts (empty: no answer). SQuAD JSON, or a table."""
    if path.suffix.lower() == ".json":
        return _squad(path)
    from bertstudio.core.training.data import RowIssue

    header, rows = readers.table_rows(path, control)
    question = readers.pick_column(header, columns.question, QUESTION_NAMES, "question", path)
    context = readers.pick_column(header, columns.context, CONTEXT_NAMES, "context", path, (question,))
    answer = readers.pick_column(header, columns.answer, ANSWER_NAMES, "answer", path, (question, context))
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
        examples.append(readers.Example(line, q, (q, c), golds, readers.extra_fields(row, (question, context, answer))))
    return readers.finish_dataset(path, examples, issues, (question, context, answer), header)



def predict(loaded: LoadedModel, examples: Sequence[readers.Example], control: TaskControl,
            options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """The best answer per question: each question's windows made by the task's own preprocess, every
    window of the file through the batch engine (sorted, a token budget), each question's start and
    end logits read back by the task's own postprocess, as `tasks.qa.answer` reads one question."""
    require_span_head(loaded)
    no_answer = any(not x.gold for x in examples)
    settings = QAOptions(allow_no_answer=no_answer)
    notes = ["Some questions have no answer, so the empty answer was allowed to win (SQuAD 2.0)."] if no_answer else []
    features = []
    for i, example in enumerate(examples):
        if i % 64 == 0:
            progress(control, i, len(examples), "Windowed")
        features.append(preprocess(loaded.tokenizer, example.inputs[0], example.inputs[1], settings,
                                   loaded.info.max_length))
    starts, ends = window_logits(loaded, features, control, max_rows=options.batch_size)
    out = []
    for n, example in enumerate(examples):
        answers, _, _ = postprocess(features[n], starts[n], ends[n], example.inputs[1], settings)
        best = answers[0] if answers else None
        text = best.answer if best is not None else ""
        out.append(Prediction(text, text or "(no answer)", best.score if best is not None else 0.0))
    return out, notes


def metrics(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    """The official SQuAD exact match and F1 (squad.py)."""
    from bertstudio.core.tasks.qa.squad import squad_scores

    return squad_scores(golds, predictions), {}, None


def inputs_of(example: readers.Example) -> QAInput:
    return QAInput(*example.inputs)


def shown_gold(example: readers.Example, prediction: Any) -> str:
    return " | ".join(example.gold) if example.gold else "(no answer)"


def correct(gold: Any, prediction: Any) -> bool:
    from bertstudio.core.tasks.qa import squad

    return bool(squad.exact_match(gold, prediction))


def label_of(example: readers.Example) -> str:
    return "answerable" if example.gold else "no answer"

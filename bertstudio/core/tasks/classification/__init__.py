"""Sequence classification: every label's score for a text, a text pair, or many rows.

transformers' TextClassificationPipeline does the numbers (softmax / sigmoid / none chosen
from `problem_type` and the number of labels, exactly as the pipeline does); we add clear
errors, visible truncation, CSV/TSV batches and CSV export.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core import execution
from bertstudio.core import notes as _notes
from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification import steps
from bertstudio.core.tasks.classification.steps import score_kind
from bertstudio.core.text_limits import Truncation, require_text

if TYPE_CHECKING:
    from bertstudio.core.compare import RankingDiff

MAX_ROWS = 100_000


@dataclass(frozen=True)
class ClassificationInput:
    """One text, or a pair (text A, text B) such as a paraphrase check."""

    text: str
    pair: str | None = None


@dataclass(frozen=True)
class ClassificationBatchInput:
    """Many rows: the texts themselves, or a CSV/TSV/.txt file read in the worker (big files)."""

    texts: tuple[str, ...] = ()
    path: str | None = None
    column: str | None = None  # of a CSV/TSV; None: 'text' if there is one, else the first

    def with_files_read(self, control: TaskControl) -> ClassificationBatchInput:
        """The rows themselves (core.jobs.run_spec reads the file once, before any model runs)."""
        if self.path is None:
            return self
        control.report(f"Reading {Path(self.path).name}…")
        return ClassificationBatchInput(tuple(texts_of_file(self.path, self.column, control)))


@dataclass(frozen=True)
class LabelScore:
    label: str
    score: float

    def to_json(self) -> dict[str, object]:
        return {"label": self.label, "score": self.score}


@dataclass(frozen=True)
class Classification:
    """One row: every label with its score, best first."""

    text: str
    scores: tuple[LabelScore, ...]
    text_pair: str | None = None
    truncated: bool = False  # the model did not read all of the text (or pair)

    @property
    def top(self) -> LabelScore:
        return self.scores[0]

    def to_json(self) -> list[dict[str, object]]:
        return [s.to_json() for s in self.scores]


@dataclass(frozen=True)
class ClassificationResult:
    """`kind` says how to read scores: probabilities that sum to one, independent ones, or a value."""

    rows: tuple[Classification, ...]
    kind: str  # "single-label" (softmax), "multi-label" (sigmoid), "regression" (raw value)
    batch: bool = False
    truncation: Truncation | None = None  # for a single text: exactly what was cut

    @property
    def first(self) -> Classification:
        return self.rows[0]

    @property
    def notes(self) -> tuple[Note, ...]:
        found = list(execution.truncation_notes(self.truncation))
        cut = [i + 1 for i, row in enumerate(self.rows) if row.truncated]
        if cut and not self.truncation:
            shown = ", ".join(map(str, cut[:10])) + ("…" if len(cut) > 10 else "")
            found.append(_notes.warning(
                f"{len(cut)} input(s) were longer than the model reads and were cut (rows {shown})."))
        return tuple(found)

    def to_json(self) -> list[dict[str, object]] | list[list[dict[str, object]]]:
        if self.batch:
            return [row.to_json() for row in self.rows]
        return self.first.to_json()


def _ranked(config: Any, scores: Any) -> list[dict[str, Any]]:
    """Every label with its score, highest first (ties in label-id order), as the pipeline's top_k=None."""
    found = [{"label": config.id2label[i], "score": float(score)} for i, score in enumerate(scores)]
    return sorted(found, key=lambda item: item["score"], reverse=True)


def _row(text: str, pair: str | None, raw: list[dict[str, Any]], truncated: bool) -> Classification:
    scores = tuple(LabelScore(str(item["label"]), float(item["score"])) for item in raw)
    return Classification(text=text, text_pair=pair, scores=scores, truncated=truncated)


def classify(loaded: LoadedModel, text: str, pair: str | None = None) -> ClassificationResult:
    """Every label's score for one text, or for a pair (text A, text B) such as a paraphrase check: the
    text-classification pipeline's scores (top_k=None), its one forward run by the batch engine. A text
    is cut where the model stops reading; a pair too long is cut longest-first, as the pipeline cuts it."""
    require_text(text)
    kind = score_kind(loaded.model.config)
    if pair is not None and pair.strip():
        return ClassificationResult(_classified(loaded, [(text, pair)], progress=False), kind)
    read, truncation = (text, None) if execution.surely_fits(loaded, text) else execution.fit(loaded, text)
    (row,) = _classified(loaded, [(read,)], progress=False)
    return ClassificationResult((replace(row, truncated=truncation is not None),), kind, truncation=truncation)


def classify_batch(
    loaded: LoadedModel,
    texts: Sequence[str],
    control: TaskControl | None = None,
    batch_size: int | None = None,
) -> ClassificationResult:
    """Every label's score per row (the batch engine: sorted by length, a token budget, at most
    `batch_size` rows per forward, by default as many as the budget holds: 16 left a GPU forward of short
    rows nearly empty); long rows are cut (and counted), empty rows are an error."""
    rows = list(texts)
    if not rows:
        raise InputError("There are no rows to classify.", hint="Paste one text per line, or open a CSV/TSV file.")
    if len(rows) > MAX_ROWS:
        raise InputError(f"{len(rows):,} rows are more than the {MAX_ROWS:,} this app classifies at once.")
    empty = [i + 1 for i, t in enumerate(rows) if not t or not t.strip()]
    if empty:
        raise InputError(
            f"Row {empty[0]} is empty" + (f" (and {len(empty) - 1} more)." if len(empty) > 1 else "."),
            hint="Remove empty rows or fill them in.",
        )
    found = _classified(loaded, [(text,) for text in rows], control or TaskControl(), max_rows=batch_size,
                        verb="Classified")
    return ClassificationResult(found, score_kind(loaded.model.config), batch=True)


def _classified(loaded: LoadedModel, rows: list[tuple[str, ...]], control: TaskControl | None = None,
                **options: Any) -> tuple[Classification, ...]:
    """read(forward(encode(rows))): the task's pipeline, the engine's forward; every row's labels ranked."""
    encoded, logits = steps.logits(loaded, rows, control, **options)
    scores = steps.read(loaded, logits)
    cut, config = set(encoded.cut), loaded.model.config
    return tuple(_row(row[0], row[1] if len(row) > 1 else None, _ranked(config, values), i in cut)
                 for i, (row, values) in enumerate(zip(rows, scores, strict=True)))


# -- tables in, tables out -------------------------------------------------------------------------
def _read(path: str | Path, control: TaskControl | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV/TSV (through core.datafiles: special files, size, field length
    and row count bounded); short rows are kept, a missing cell reads as empty."""
    from bertstudio.core.datafiles import csv_records, delimiter_of, tick, too_many_rows
    from bertstudio.core.files import read_text

    path = Path(path).expanduser()
    text = read_text(path, "file")
    table: list[list[str]] = []
    for _line, row in csv_records(text, delimiter_of(path, text), path):
        if any(cell.strip() for cell in row):
            if len(table) > MAX_ROWS:
                raise too_many_rows(path, MAX_ROWS)
            tick(control, len(table))
            table.append(row)
    if not table:
        raise InputError(f"'{path}' is empty.", hint="A CSV/TSV needs a header line and one row per text.")
    header = [cell.strip() for cell in table[0]]
    return header, table[1:]


def table_columns(path: str | Path) -> list[str]:
    """The header of a CSV/TSV file: the columns a user can choose the texts from."""
    return _read(path)[0]


def read_texts(path: str | Path, column: str | None = None, control: TaskControl | None = None) -> list[str]:
    """The texts of one column (by default 'text' if there is one, else the first column)."""
    header, rows = _read(path, control)
    if column is None:
        column = "text" if "text" in header else header[0]
    if column not in header:
        raise InputError(
            f"'{Path(path).name}' has no column '{column}'.",
            hint="Its columns are: " + ", ".join(f"'{c}'" for c in header) + ".",
        )
    index = header.index(column)
    texts = [row[index] if index < len(row) else "" for row in rows]
    if not texts:
        raise InputError(f"'{Path(path).name}' has a header but no rows.")
    return texts


def lines_to_texts(pasted: str) -> list[str]:
    """Pasted batch input: one text per non-blank line."""
    return [line.strip() for line in pasted.splitlines() if line.strip()]


def texts_of_file(path: str | Path, column: str | None = None, control: TaskControl | None = None) -> list[str]:
    """The rows of a batch file: a .txt holds one text per line; a CSV/TSV a column of texts."""
    if Path(path).suffix.lower() == ".txt" and column is None:
        from bertstudio.core.datafiles import read_lines

        return [text for _line, text in read_lines(Path(path).expanduser(), "file", MAX_ROWS, control)]
    return read_texts(path, column, control)


def result_rows(result: ClassificationResult) -> list[dict[str, object]]:
    """One flat record per row (text, best label, its score, then every label's score)."""
    labels = sorted({s.label for row in result.rows for s in row.scores})
    records = []
    for row in result.rows:
        record: dict[str, object] = {"text": row.text}
        if row.text_pair is not None:
            record["text_pair"] = row.text_pair
        record["label"] = row.top.label
        record["score"] = row.top.score
        by_label = {s.label: s.score for s in row.scores}
        for label in labels:
            record[f"score:{label}"] = by_label.get(label, "")
        records.append(record)
    return records


def export_csv(result: ClassificationResult, path: str | Path) -> None:
    """Write the batch result as CSV (readable by spreadsheets and pandas). An existing pipe or
    device is refused: opening a FIFO nobody reads would wait for ever."""
    if Path(path).exists() and not Path(path).is_file():
        raise InputError(f"Cannot write '{path}': it is not a regular file (a pipe or a device).",
                         hint="Give the name of a new or ordinary file.")
    records = result_rows(result)
    fields = list(dict.fromkeys(key for record in records for key in record))
    try:
        with Path(path).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            writer.writerows(records)
    except OSError as error:
        raise InputError(f"Cannot write '{path}': {error.strerror}.") from error


def compare(a: ClassificationResult, b: ClassificationResult) -> tuple[RankingDiff, ...]:
    """Row-by-row differences of two models' results on the same input (core.compare.RankingDiff);
    classifiers with different label sets are said to be so (their top labels do not compare)."""
    from bertstudio.core.compare import compare_ranking_lists, with_label_sets

    diffs = compare_ranking_lists([row.scores for row in a.rows], [row.scores for row in b.rows])
    return with_label_sets(diffs, (s.label for row in a.rows for s in row.scores),
                           (s.label for row in b.rows for s in row.scores))


def run(
    loaded: LoadedModel, inputs: ClassificationInput | ClassificationBatchInput, control: TaskControl
) -> ClassificationResult:
    """One text (or pair), or rows: a file's are read before the run (ClassificationBatchInput.with_files_read)."""
    if isinstance(inputs, ClassificationInput):
        return classify(loaded, inputs.text, inputs.pair)
    return classify_batch(loaded, inputs.texts, control)


# Trace why's Copy as Python: how its script reads P(target) from the outputs (the clean prediction).
PATCH_READER = (
    'def probability(outputs):\n'
    '    return outputs.logits.softmax(-1)[0, LABEL]\n'
    '\n'
    '\n'
    '\n'
    '\n'
    '# the chosen target, as the app reads it: a label name, else a label number\n'
    'LABELS = {str(name): int(number) for number, name in (model.config.id2label or {}).items()}\n'
    'LABEL = LABELS[TARGET] if TARGET in LABELS else int(TARGET)\n'
)

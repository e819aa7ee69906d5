"""Extractive question answering: the best spans of a context, with character offsets.

transformers 5.3 removed QuestionAnsweringPipeline, so the span decoding lives here, in the
pipelines' preprocess -> forward -> postprocess shape and with the removed pipeline's defaults
(doc_stride 128, max_answer_len 15, max_seq_len 384, max_question_len 64, top_k 1).
Scores are the pipeline's: within each window, softmax over the start logits and over the
end logits of the context tokens (and CLS), score = p_start * p_end. Long contexts are read
in overlapping windows; the same character span found in two windows counts once, at its
best score. With `allow_no_answer` the null score (p_start * p_end at CLS, lowest over the
windows) competes with the spans, less a user threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bertstudio.core import engine
from bertstudio.core import notes as _notes
from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.text_limits import require_text

if TYPE_CHECKING:  # numpy is imported where it is used: every spec is read before the window shows
    import numpy as np

    from bertstudio.core.tasks.qa.spans import SpanDiff

MAX_TOP_K = 100


@dataclass(frozen=True)
class QAOptions:
    """The tab's and the CLI's settings as one plain object (defaults of the removed pipeline)."""

    top_k: int = 1
    max_answer_len: int = 15  # tokens
    doc_stride: int = 128  # tokens shared by consecutive windows
    max_seq_len: int = 384  # tokens per window, question and special tokens included
    max_question_len: int = 64  # tokens
    allow_no_answer: bool = False  # SQuAD 2.0 models: the empty answer may win
    null_threshold: float = 0.0  # the empty answer wins only if null score - threshold beats every span
    align_to_words: bool = True  # widen spans to whole words, as the pipeline did

    def validate(self) -> None:
        if not 1 <= self.top_k <= MAX_TOP_K:
            raise InputError(f"top-k must be between 1 and {MAX_TOP_K}, not {self.top_k}.")
        if self.max_answer_len < 1:
            raise InputError(f"The maximum answer length must be at least 1 token, not {self.max_answer_len}.")
        if self.doc_stride < 0:
            raise InputError(f"The doc stride cannot be negative ({self.doc_stride}).")
        if self.max_seq_len < 8:
            raise InputError(f"The window length must be at least 8 tokens, not {self.max_seq_len}.")
        if self.max_question_len < 1:
            raise InputError("The maximum question length must be at least 1 token.")


@dataclass(frozen=True)
class QAInput:
    question: str
    context: str
    options: QAOptions = field(default_factory=QAOptions)


@dataclass(frozen=True)
class Answer:
    answer: str
    score: float
    start: int  # character offsets in the context; 0, 0 for "no answer"
    end: int
    window: int = -1  # the window whose score this is; -1 for "no answer"

    @property
    def is_null(self) -> bool:
        return self.window < 0

    def to_json(self) -> dict[str, object]:
        return {"answer": self.answer, "score": self.score, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Features:
    """What preprocess gives forward: the model inputs of every window and how to read them back."""

    inputs: dict[str, np.ndarray]  # (windows, length) arrays, padded to the longest window
    allowed: np.ndarray  # (windows, length) bool: context tokens and CLS, the only answer candidates
    context_mask: np.ndarray  # (windows, length) bool: context tokens only
    cls_index: np.ndarray  # (windows,) position of CLS (the null answer) in each window
    char_start: np.ndarray  # (windows, length) answer start character if a span starts here
    char_end: np.ndarray  # (windows, length) answer end character if a span ends here
    token_start: np.ndarray  # (windows, length) raw token offsets in the context (-1 elsewhere)
    token_end: np.ndarray
    token_text: tuple[tuple[str, ...], ...]  # the tokens of each window
    notes: tuple[Note, ...] = ()

    @property
    def windows(self) -> int:
        return int(self.allowed.shape[0])


@dataclass(frozen=True)
class ContextTokens:
    """Each context token once (overlapping windows merged), with its best start/end probability."""

    tokens: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]  # character offsets in the context
    start_scores: np.ndarray
    end_scores: np.ndarray


@dataclass(frozen=True)
class QAResult:
    question: str
    context: str
    answers: tuple[Answer, ...]  # best first; the null answer among them when it may win
    tokens: ContextTokens
    windows: tuple[tuple[int, int], ...]  # characters of the context each window read
    options: QAOptions
    null_score: float | None = None
    notes: tuple[Note, ...] = ()  # windows, a lowered stride

    @property
    def best(self) -> Answer | None:
        return self.answers[0] if self.answers else None

    def to_json(self) -> list[dict[str, object]]:
        return [a.to_json() for a in self.answers]


# -- preprocess ------------------------------------------------------------------------------
def question_first_in(tokenizer: Any) -> bool:
    return getattr(tokenizer, "padding_side", "right") == "right"


def preprocess(tokenizer: Any, question: str, context: str, options: QAOptions, model_max_length: int) -> Features:
    """Tokenize question + context into overlapping windows; locate context tokens and offsets."""
    import numpy as np

    require_text(question, "question")
    require_text(context, "context")
    options.validate()
    question = question.strip()
    max_seq_len, stride, notes = _window_room(tokenizer, question, options, model_max_length)
    question_first = question_first_in(tokenizer)
    pair = (question, context) if question_first else (context, question)
    encoded = tokenizer(*pair, truncation="only_second" if question_first else "only_first", max_length=max_seq_len,
                        stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True, padding="longest")
    input_ids = np.asarray(encoded["input_ids"], dtype=np.int64)
    windows = range(input_ids.shape[0])
    sequences = np.array([[-1 if s is None else s for s in encoded.sequence_ids(w)] for w in windows])
    context_mask = sequences == (1 if question_first else 0)
    words = np.array([[-1 if x is None else x for x in encoded.word_ids(w)] for w in windows], dtype=np.int64)
    offsets = np.asarray(encoded["offset_mapping"], dtype=np.int64)
    token_start = np.where(context_mask, offsets[..., 0], -1)
    token_end = np.where(context_mask, offsets[..., 1], -1)
    char_start, char_end = _char_spans(options, context_mask, np.where(context_mask, words, -1), token_start, token_end)
    cls_id = tokenizer.cls_token_id
    is_cls = (input_ids == cls_id) if cls_id is not None else np.zeros_like(context_mask)
    allowed = context_mask | is_cls
    if "attention_mask" in encoded:
        allowed &= np.asarray(encoded["attention_mask"], dtype=bool)
    names = [name for name in tokenizer.model_input_names if name in encoded]
    return Features(
        inputs={name: np.asarray(encoded[name], dtype=np.int64) for name in names}, allowed=allowed,
        context_mask=context_mask, cls_index=np.where(is_cls.any(axis=1), is_cls.argmax(axis=1), 0),
        char_start=char_start, char_end=char_end, token_start=token_start, token_end=token_end,
        token_text=tuple(tuple(tokenizer.convert_ids_to_tokens(row.tolist())) for row in input_ids), notes=notes,
    )


def _window_room(tokenizer: Any, question: str, options: QAOptions,
                 model_max_length: int) -> tuple[int, int, tuple[Note, ...]]:
    """(window length, doc stride, a note where the stride was lowered to fit next to the question)."""
    question_tokens = len(tokenizer(question, add_special_tokens=False)["input_ids"])
    if question_tokens > options.max_question_len:
        raise InputError(
            f"The question is {question_tokens} tokens; at most {options.max_question_len} are allowed.",
            hint="Ask a shorter question, or raise the maximum question length.",
        )
    max_seq_len = min(options.max_seq_len, model_max_length)
    room = max_seq_len - question_tokens - tokenizer.num_special_tokens_to_add(pair=True)
    if room < 2:
        raise InputError(
            f"The question leaves no room for the context in a window of {max_seq_len} tokens.",
            hint="Ask a shorter question.",
        )
    if options.doc_stride < room:
        return max_seq_len, options.doc_stride, ()
    stride = room // 2
    return max_seq_len, stride, (_notes.info(
        f"Doc stride lowered from {options.doc_stride} to {stride} tokens: each window holds only "
        f"{room} context tokens next to this question (model limit {model_max_length})."),)


def _char_spans(options: QAOptions, context_mask: np.ndarray, word_ids: np.ndarray, token_start: np.ndarray,
                token_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The characters an answer starting or ending at each token spans: the token's own, or (aligned to
    words) its word's across every window (a word cut by a window edge stays whole)."""
    import numpy as np

    char_start, char_end = token_start.copy(), token_end.copy()
    if options.align_to_words and (word_ids[context_mask] >= 0).all():
        words_seen = word_ids[context_mask]
        first = np.full(words_seen.max() + 1, np.iinfo(np.int64).max)
        last = np.full(words_seen.max() + 1, -1)
        np.minimum.at(first, words_seen, token_start[context_mask])
        np.maximum.at(last, words_seen, token_end[context_mask])
        char_start[context_mask] = first[words_seen]
        char_end[context_mask] = last[words_seen]
    return char_start, char_end


# -- forward ---------------------------------------------------------------------------------
def window_logits(loaded: LoadedModel, features: Sequence[Features], control: TaskControl | None = None,
                  **options: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Start and end logits, (windows, length) float32, of each input's windows: every window through the
    batch engine (its padding left out; sorted, a token budget), read back into its input's rows (0 at
    padding). `options`: engine.run's (max_rows...)."""
    import numpy as np

    kept = [(n, w, f.inputs["attention_mask"][w].astype(bool) if "attention_mask" in f.inputs
             else np.ones(f.allowed.shape[1], bool)) for n, f in enumerate(features) for w in range(f.windows)]
    types = "token_type_ids" in features[0].inputs if features else False
    windows = engine.Encoded(
        input_ids=[features[n].inputs["input_ids"][w][real].tolist() for n, w, real in kept],
        token_type_ids=[features[n].inputs["token_type_ids"][w][real].tolist() for n, w, real in kept] if types
        else None, cut=(), max_length=loaded.info.max_length)
    model = loaded.model

    def forward(batch: engine.Batch) -> Any:
        output = model(**batch.inputs)
        return output.start_logits, output.end_logits

    def own_length(batch: engine.Batch, values: Any) -> list[Any]:
        return [(values[0][k, :length], values[1][k, :length]) for k, length in enumerate(batch.lengths.tolist())]

    logits = engine.run(loaded, windows, forward, control, verb="Read", unit="windows", rows_of=own_length, **options)
    starts = [np.zeros(f.allowed.shape, np.float32) for f in features]
    ends = [np.zeros(f.allowed.shape, np.float32) for f in features]
    for (n, w, real), (start, end) in zip(kept, logits, strict=True):
        starts[n][w, real], ends[n][w, real] = start, end
    return starts, ends


# -- postprocess -----------------------------------------------------------------------------
def window_probabilities(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Softmax of each window's logits over its allowed tokens (context and CLS); 0 elsewhere."""
    import numpy as np

    masked = np.where(allowed, logits.astype(np.float64), -np.inf)
    masked = masked - masked.max(axis=-1, keepdims=True)
    exp = np.exp(masked)
    return exp / exp.sum(axis=-1, keepdims=True)


def postprocess(
    features: Features, start_logits: np.ndarray, end_logits: np.ndarray, context: str, options: QAOptions
) -> tuple[tuple[Answer, ...], float | None, ContextTokens]:
    """The top-k distinct character spans over all windows, plus the per-token scores for the plot."""
    import numpy as np

    p_start = window_probabilities(start_logits, features.allowed)
    p_end = window_probabilities(end_logits, features.allowed)
    rows = np.arange(features.windows)
    null_scores = p_start[rows, features.cls_index] * p_end[rows, features.cls_index]
    span_start = np.where(features.context_mask, p_start, 0.0)
    span_end = np.where(features.context_mask, p_end, 0.0)

    length = span_start.shape[1]
    starts_idx, ends_idx = np.triu_indices(length)
    band = ends_idx - starts_idx < options.max_answer_len
    starts_idx, ends_idx = starts_idx[band], ends_idx[band]
    windows_idx = np.repeat(rows, starts_idx.size)
    s = np.tile(starts_idx, features.windows)
    e = np.tile(ends_idx, features.windows)
    valid = features.context_mask[windows_idx, s] & features.context_mask[windows_idx, e]
    windows_idx, s, e = windows_idx[valid], s[valid], e[valid]
    scores = span_start[windows_idx, s] * span_end[windows_idx, e]
    char_s = features.char_start[windows_idx, s]
    char_e = features.char_end[windows_idx, e]
    # A span must hold characters (byte-level BPE has pieces that are only a space).
    real = char_e > char_s
    windows_idx, scores, char_s, char_e = windows_idx[real], scores[real], char_s[real], char_e[real]

    # Best first; a character span seen again (another window, another piece of the same word) is dropped.
    order = np.argsort(-scores, kind="stable")
    keys = char_s[order] * (len(context) + 1) + char_e[order]
    _, first_seen = np.unique(keys, return_index=True)
    keep = order[np.sort(first_seen)][: options.top_k]
    answers = [
        Answer(context[int(char_s[i]):int(char_e[i])], float(scores[i]), int(char_s[i]), int(char_e[i]),
               int(windows_idx[i]))
        for i in keep
    ]
    null_score: float | None = None
    if options.allow_no_answer:
        null_score = float(null_scores.min())
        null = Answer("", null_score, 0, 0, -1)
        rank = null_score - options.null_threshold
        position = next((i for i, a in enumerate(answers) if rank > a.score), len(answers))
        answers = (answers[:position] + [null] + answers[position:])[: options.top_k]
    return tuple(answers), null_score, _context_tokens(features, p_start, p_end)


def _context_tokens(features: Features, p_start: np.ndarray, p_end: np.ndarray) -> ContextTokens:
    """Merge the windows' context tokens by their character offsets, keeping the best probability
    (and the first window's token text), in character order."""
    import numpy as np

    windows, positions = np.nonzero(features.context_mask)
    starts, ends = features.token_start[windows, positions], features.token_end[windows, positions]
    spans, first, inverse = np.unique(np.stack([starts, ends], axis=1), axis=0, return_index=True, return_inverse=True)
    best_start, best_end = np.zeros(len(spans)), np.zeros(len(spans))
    np.maximum.at(best_start, inverse.ravel(), p_start[windows, positions])
    np.maximum.at(best_end, inverse.ravel(), p_end[windows, positions])
    return ContextTokens(tokens=tuple(features.token_text[windows[i]][positions[i]] for i in first),
                         spans=tuple((int(a), int(b)) for a, b in spans.tolist()),
                         start_scores=best_start, end_scores=best_end)


def _window_chars(features: Features) -> tuple[tuple[int, int], ...]:
    spans = []
    for w in range(features.windows):
        starts = features.token_start[w][features.context_mask[w]]
        ends = features.token_end[w][features.context_mask[w]]
        spans.append((int(starts.min()), int(ends.max())) if starts.size else (0, 0))
    return tuple(spans)


def check_span_config(config: Any, source: str) -> None:
    """A QA head gives two numbers per token (start, end); a checkpoint configured with other
    labels (a token classifier) would fail deep inside the model's forward, in every consumer
    (answer, explain, head importance, export): refused by the loader, for all of them."""
    labels = getattr(config, "num_labels", 2)
    if labels != 2:
        raise MissingHeadError(
            f"The checkpoint '{source}' is configured with {labels} labels; a question-answering head needs 2 "
            "(answer start and end), so it cannot answer questions.",
            hint="Choose a question-answering checkpoint (e.g. one fine-tuned on SQuAD).",
        )


def require_span_head(loaded: LoadedModel) -> None:
    """check_span_config for a model already loaded (one built in memory skips the loader's check)."""
    check_span_config(loaded.model.config, loaded.info.request.source)


def answer(
    loaded: LoadedModel,
    question: str,
    context: str,
    options: QAOptions | None = None,
    control: TaskControl | None = None,
) -> QAResult:
    """The best spans of `context` answering `question`; errors a user understands for bad input."""
    options = options or QAOptions()
    control = control or TaskControl()
    require_span_head(loaded)
    features = preprocess(loaded.tokenizer, question, context, options, loaded.info.max_length)
    control.check()
    (start_logits,), (end_logits,) = window_logits(loaded, [features], control, progress=features.windows > 1)
    answers, null_score, tokens = postprocess(features, start_logits, end_logits, context, options)
    notes = list(features.notes)
    if features.windows > 1:
        notes.insert(0, _notes.info(f"The context was read in {features.windows} overlapping windows."))
    return QAResult(question=question, context=context, answers=answers, tokens=tokens,
                    windows=_window_chars(features), options=options, null_score=null_score, notes=tuple(notes))


def _best_for_compare(result: QAResult) -> dict[str, object] | None:
    """The best answer as compare_spans reads it; the null answer has no span but keeps its score."""
    best = result.best
    if best is None:
        return None
    if best.is_null:
        return {"start": None, "end": None, "text": "", "score": best.score}
    return {"start": best.start, "end": best.end, "text": best.answer, "score": best.score}


def compare(a: QAResult, b: QAResult) -> SpanDiff:
    """tasks/qa/spans.SpanDiff of model A's best answer -> model B's on the same question and context."""
    from bertstudio.core.tasks.qa.spans import compare_spans

    if a.context != b.context or a.question != b.question:
        raise InputError("The two answers are to different questions or contexts; they cannot be compared.")
    return compare_spans(_best_for_compare(a), _best_for_compare(b))


def run(loaded: LoadedModel, inputs: QAInput, control: TaskControl) -> QAResult:
    return answer(loaded, inputs.question, inputs.context, inputs.options, control)

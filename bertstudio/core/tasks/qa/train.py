"""Extractive question answering: SQuAD JSON (v1.1, v2.0 with unanswerable questions) or the
question/context/answer table that Evaluate reads, fine-tuned as transformers' run_qa.py does.

A context longer than the maximum length is split into overlapping windows (the tokenizer's
`return_overflowing_tokens` and `stride`); each window is one training row whose answer span is
given in tokens, or the CLS token where the answer is not (wholly) in that window or there is
none. Validation's exact match and F1 are read by Evaluate's own predictor on the model being
trained (ReadAsEvaluate), so Train and Evaluate give one number for the same model and file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from bertstudio.core.errors import InputError, ModelSourceError
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.qa.train_read import QAExample, read_qa
from bertstudio.core.tasks.qa.train_windows import (
    MAX_WINDOWS_PER_QUESTION,
    check_windows,
    refuse_too_many,
    window_stride,
)
from bertstudio.core.training import metrics as metrics_mod
from bertstudio.core.training.base import Config, Data, TrainableTask, load_model_class, train_and_validation
from bertstudio.core.training.events import preparing

COUNT_WINDOWS_UP_TO = 20_000  # the plan tokenizes to count windows up to this many questions
_EXTRA = ("offset_mapping", "example_index", "cls_index")  # where a window's labels came from; not for the model


ENCODE_CHUNK = 256  # questions per tokenizer call: a Cancel check and a progress line between calls


def encode_windows(tokenizer: Any, rows: Sequence[QAExample], max_length: int,
                   control: TaskControl | None = None) -> list[dict[str, Any]]:
    """One feature per window: token ids, the answer's token span (CLS when absent) and, for
    validation, the window's character offsets into its context and the question it belongs to.
    The windows are counted and bounded first (train_windows.py), then made ENCODE_CHUNK questions at a time."""
    check_windows(tokenizer, rows, max_length, control)
    features: list[dict[str, Any]] = []
    for first in range(0, len(rows), ENCODE_CHUNK):
        if control is not None:
            preparing(control, f"Tokenizing questions: {first:,} of {len(rows):,}…", first / len(rows))
            control.check()
        features += _windows(tokenizer, rows, first, rows[first:first + ENCODE_CHUNK], max_length)
    return features


def _windows(tokenizer: Any, rows: Sequence[QAExample], offset: int, chunk: Sequence[QAExample],
             max_length: int) -> list[dict[str, Any]]:
    """The windows of `chunk` (questions `offset`... of `rows`), each question's count checked exactly."""
    pad_right = getattr(tokenizer, "padding_side", "right") == "right"
    questions, contexts = [r.question.lstrip() for r in chunk], [r.context for r in chunk]
    first, second = (questions, contexts) if pad_right else (contexts, questions)
    encoded = tokenizer(first, second, truncation="only_second" if pad_right else "only_first",
                        max_length=max_length, stride=window_stride(max_length), return_overflowing_tokens=True,
                        return_offsets_mapping=True)
    counts = Counter(encoded["overflow_to_sample_mapping"])  # counted in pieces, a context may come out a
    refuse_too_many([(chunk[i].line, n, -1) for i, n in sorted(counts.items())  # window over: checked exactly
                     if n > MAX_WINDOWS_PER_QUESTION], max_length)
    context_id = 1 if pad_right else 0
    features = []
    for i, ids in enumerate(encoded["input_ids"]):
        example = offset + encoded["overflow_to_sample_mapping"][i]
        row = rows[example]
        sequence = encoded.sequence_ids(i)
        offsets: list[Any] = [tuple(o) if sequence[k] == context_id else None
                              for k, o in enumerate(encoded["offset_mapping"][i])]
        cls = ids.index(tokenizer.cls_token_id) if tokenizer.cls_token_id in ids else 0
        start = end = cls
        if row.start >= 0:
            char_start, char_end = row.start, row.start + len(row.answers[0])
            inside = [k for k, o in enumerate(offsets) if o is not None]
            if inside and offsets[inside[0]][0] <= char_start and offsets[inside[-1]][1] >= char_end:
                start = next(k for k in inside if offsets[k][1] > char_start)
                end = next(k for k in reversed(inside) if offsets[k][0] < char_end)
        feature = {key: encoded[key][i] for key in encoded
                   if key not in ("offset_mapping", "overflow_to_sample_mapping")}
        feature.update(start_positions=start, end_positions=end, offset_mapping=offsets, example_index=example,
                       cls_index=cls)
        features.append(feature)
    return features


class ReadAsEvaluate:
    """Validation's exact match and F1 read by Evaluate's own QA predictor (`tasks.qa.evaluate.predict`:
    the task's windows, span rules and empty-answer rule) on the model being trained, so Train and
    Evaluate report one number for the same model and file (issue 29 #15: a second span decoder here
    picked other answers). The Trainer's pass over the training windows still gives eval_loss.
    Each of the predictor's batches is one of the Trainer's evaluation steps (`each_batch`), so a
    Stop or Cancel ends the read there, as it ends the Trainer's own evaluation batches."""

    def __init__(self, examples: Sequence[QAExample]) -> None:
        from bertstudio.core.evaluate.readers import Example

        self.examples = [Example(x.line, x.question, (x.question, x.context), x.answers) for x in examples]
        self.loaded: Any = None
        self.control = TaskControl()

    def bind(self, model: Any, tokenizer: Any, each_batch: Callable[[], object]) -> None:
        """The model being trained (known once the Trainer is built) and the Trainer's per-step stop check."""
        from bertstudio.core.models import in_memory

        self.loaded = in_memory(model, tokenizer, "the model being trained", QuestionAnswering.key)
        self.control = _StepChecks(each_batch)

    def __call__(self, _pred: Any) -> dict[str, float]:
        from bertstudio.core.evaluate.predict import EvalOptions
        from bertstudio.core.tasks.qa.evaluate import predict
        from bertstudio.core.tasks.qa.squad import squad_scores

        predictions, _notes = predict(self.loaded, self.examples, self.control, EvalOptions())
        scores = squad_scores([x.gold for x in self.examples], [p.value for p in predictions])
        return {key: scores[key] for key in ("exact_match", "f1")}  # 0-1, as Evaluate reports them


class _StepChecks(TaskControl):
    """A control whose every check is also the Trainer's evaluation-step check (its callbacks raise
    EvaluationStopped on a Stop or Cancel)."""

    def __init__(self, each_batch: Callable[[], object]) -> None:
        super().__init__()
        self._each_batch = each_batch

    def check(self) -> None:
        self._each_batch()
        super().check()


def first_logit(logits: Any, _labels: Any) -> Any:
    """The Trainer keeps one number per window, not the whole logits: ReadAsEvaluate reads the model."""
    return logits[0][:, :1]


class QACollator:
    """Pads the windows; the validation-only fields never reach the model."""

    def __init__(self, tokenizer: Any) -> None:
        from transformers import DataCollatorWithPadding

        self.pad = DataCollatorWithPadding(tokenizer)

    def __call__(self, features: list[dict[str, Any]]) -> Any:
        return self.pad([{k: v for k, v in f.items() if k not in _EXTRA} for f in features])


class QuestionAnswering(TrainableTask):
    key: ClassVar[str] = "qa"  # the QA spec's key (test_task_packages checks it), as `evaluate --task` names it
    order = 40
    title = "Question answering (SQuAD JSON, or question/context/answer table)"
    demo_files = ("qa_train.json", "qa_eval.json")
    auto_class = "AutoModelForQuestionAnswering"

    def read(self, config: Config, nsp: bool = True) -> Data:
        questions, evaluation = train_and_validation(config, read_qa)
        unanswerable = sum(not q.answers for q in questions)
        notes = (f"{unanswerable} of {len(questions)} training questions have no answer (SQuAD v2.0): "
                 "validation may predict no answer.",) if unanswerable else ()
        return Data(questions, evaluation, [], notes)

    def planned_examples(self, config: Config, data: Data) -> int:
        """The windows, counted with the base model's tokenizer when it is a local folder."""
        folder = Path(config.model).expanduser() if config.model else None
        if folder is None or not (folder / "config.json").is_file() or len(data.train) > COUNT_WINDOWS_UP_TO:
            return len(data.train)
        from bertstudio.core.lazy_imports import import_transformers

        try:
            tokenizer = import_transformers().AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
            return len(encode_windows(tokenizer, data.train, config.max_length))
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - the run itself reports a tokenizer it cannot load
            return len(data.train)

    def load(self, folder: Path, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelSourceError("Question answering needs a fast tokenizer (tokenizer.json) for answer offsets.")
        import transformers

        return load_model_class(transformers.AutoModelForQuestionAnswering, folder), False

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        features = encode_windows(tokenizer, rows, max_length, control)
        return features, [len(f["input_ids"]) for f in features]

    def collator(self, tokenizer: Any) -> Any:
        return QACollator(tokenizer)

    def evaluation(self, data: Data, eval_rows: list[dict[str, Any]], nsp: bool) -> tuple[metrics_mod.Metrics, Any]:
        return ReadAsEvaluate(data.eval), first_logit

    def trainer_class(self, base: type) -> type:
        """The Trainer that hands its model and its evaluation-step callbacks to ReadAsEvaluate once built."""

        class QATrainer(base):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                if isinstance(self.compute_metrics, ReadAsEvaluate):
                    self.compute_metrics.bind(self.model, self.processing_class, lambda: self.callback_handler
                                              .on_prediction_step(self.args, self.state, self.control))

        return QATrainer

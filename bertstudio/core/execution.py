"""The one execution path of every task: how text reaches a loaded model and what was cut on the way.

transformers' pipelines run `preprocess -> _forward -> postprocess`, and `Pipeline.forward` alone
holds the inference context and moves the inputs to the model's device. Our tasks have the same
shape (core/tasks/*.py write their preprocess and postprocess), and this module is their
`forward`: the model lock (one job at a time per loaded model: fast tokenizers are not
thread-safe and torch already uses every core), `torch.inference_mode()`, the device move of the
encoded inputs, and the one way to say whether a text fits the model and what was cut. A task
module names none of these itself (tests/core/test_execution.py reads them to be sure).

Every forward goes through core/engine.py: batches through `engine.run`, single inputs through
`engine.exclusive` and `engine.forward` (the model lock and inference mode are taken there only).

torch is imported inside the functions: every spec is read before the window shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bertstudio.core import notes
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.text_limits import Truncation, fit_to_model

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel

LENGTH_CHUNK = 1024  # texts per tokenizer call when checking lengths; a cancel check between chunks


# -- what fits the model ----------------------------------------------------------------------------
def fit(loaded: LoadedModel, text: str, encoding: Any = None) -> tuple[str, Truncation | None]:
    """The longest prefix of `text` the model reads, and what was cut (None: nothing).
    `encoding`: the caller's tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)."""
    return fit_to_model(text, loaded.tokenizer, loaded.info.max_length, encoding)


def truncation_notes(truncation: Truncation | None) -> tuple[Note, ...]:
    """The note of a text cut by `fit`: how long it was and what the model did not read."""
    return (notes.warning(truncation.message),) if truncation else ()


def surely_fits(loaded: LoadedModel, text: str, pair: str | None = None) -> bool:
    """A cheap bound that spares tokenizing twice: no tokenizer makes more than two tokens per byte."""
    size = len(text.encode("utf-8")) + (len(pair.encode("utf-8")) if pair else 0)
    return 2 * size + loaded.tokenizer.num_special_tokens_to_add(pair=pair is not None) <= loaded.info.max_length


def too_long(
    loaded: LoadedModel,
    texts: Sequence[str],
    pairs: Sequence[str] | None = None,
    control: TaskControl | None = None,
) -> list[bool]:
    """Which texts (or text pairs, special tokens included) have more tokens than the model reads.
    Only the doubtful ones are tokenized, in chunks with a cancel check between (one call over
    100,000 rows kept Cancel and Ctrl+C waiting); the progress is reported only for long work."""
    limit = loaded.info.max_length
    doubtful = [i for i, text in enumerate(texts) if not surely_fits(loaded, text, pairs[i] if pairs else None)]
    flags = [False] * len(texts)
    for start in range(0, len(doubtful), LENGTH_CHUNK):
        if control is not None:
            control.check()
            control.report(f"Checking the length of {start} of {len(doubtful)} rows", start / len(doubtful))
        part = doubtful[start:start + LENGTH_CHUNK]
        seconds = [pairs[i] for i in part] if pairs else None
        ids = loaded.tokenizer([texts[i] for i in part], seconds, truncation=False)["input_ids"]
        for i, row in zip(part, ids, strict=True):
            flags[i] = len(row) > limit
    if control is not None:
        control.check()
    return flags

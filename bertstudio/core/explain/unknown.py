"""What an [UNK] stands for: the characters of the input it replaced, found by the tokenizer's offsets.

[UNK] is attributed like any word (targets.structural_ids), so a person must be able to read which
word it is: "[UNK]" twice in one sentence says nothing. The sequence a method explains may be a
cut of the text (truncation, a QA window), so its ids are aligned with the whole text's encoding
(difflib's matching blocks) and each [UNK] takes the characters of the token it matched. A slow
tokenizer has no offsets: its [UNK] stays "[UNK]".
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Any


def unknown_labels(tokenizer: Any, ids: Sequence[int], texts: Sequence[str]) -> dict[int, str]:
    """{index in `ids`: the original characters} for every [UNK] in `ids`, a sequence encoded from
    `texts` (one text or a pair, in the order the model reads them)."""
    unknown = tokenizer.unk_token_id
    if unknown is None or unknown not in ids or not texts or not getattr(tokenizer, "is_fast", False):
        return {}
    encoding = tokenizer(*texts[:2], return_offsets_mapping=True, verbose=False)
    full, offsets = encoding["input_ids"], encoding["offset_mapping"]
    sequences = encoding.sequence_ids()
    labels: dict[int, str] = {}
    for a, b, size in SequenceMatcher(None, list(ids), full, autojunk=False).get_matching_blocks():
        for k in range(size):
            which, (start, end) = sequences[b + k], offsets[b + k]
            if ids[a + k] == unknown and which is not None and end > start:
                labels[a + k] = texts[which][start:end]
    return labels

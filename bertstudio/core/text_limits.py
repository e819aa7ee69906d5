"""Texts longer than the model reads: cut them at a token boundary and say exactly what was cut."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bertstudio.core.errors import InputError


@dataclass(frozen=True)
class Truncation:
    """What the model did not see: the text from `cut_at` (a character offset) on."""

    tokens: int
    limit: int
    cut_at: int
    cut_text: str

    @property
    def message(self) -> str:
        preview = self.cut_text if len(self.cut_text) <= 60 else self.cut_text[:57] + "…"
        return (
            f"The text is {self.tokens} tokens; the model reads at most {self.limit}. "
            f"Everything from character {self.cut_at} on was cut: “{preview}”"
        )


def require_text(text: str, what: str = "text") -> str:
    if not text or not text.strip():
        raise InputError(f"The {what} is empty.", hint=f"Type or paste some {what}.")
    return text


def fit_to_model(text: str, tokenizer: Any, max_length: int, encoding: Any = None) -> tuple[str, Truncation | None]:
    """The longest prefix of `text` whose tokens (special tokens included) fit `max_length`.

    `encoding`: the caller's own tokenizer(text, add_special_tokens=False, return_offsets_mapping=True),
    to avoid tokenising twice."""
    room = max_length - tokenizer.num_special_tokens_to_add(pair=False)
    if encoding is None:
        encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = encoding["offset_mapping"]
    if len(offsets) <= room:
        return text, None
    cut_at = offsets[room][0] if room >= 0 else 0
    kept = text[:cut_at].rstrip()
    return kept, Truncation(tokens=len(offsets) + tokenizer.num_special_tokens_to_add(pair=False),
                            limit=max_length, cut_at=cut_at, cut_text=text[cut_at:])

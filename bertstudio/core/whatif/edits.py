"""Word edits of a task's texts: where the words are, which vocabulary entries are whole words,
and the texts after a set of edits (what is re-run through the task to verify a counterfactual).

Words are found in the text itself (letters and digits, or one punctuation mark), so an edit is
always a readable change of the text; special tokens written in it (a [MASK]) are never edited.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bertstudio.core.models import LoadedModel

MAX_WORDS = 64  # words of the input a search edits (the first ones; said in a note when there are more)


@dataclass(frozen=True)
class Word:
    part: int  # which text (0: the text or prompt, 1: the pair or sentence B)
    index: int  # its place among the words of that text (0-based)
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Edit:
    """One word replaced (`new`), or removed (`new` == "")."""

    word: Word
    new: str

    def to_json(self) -> dict[str, object]:
        return {"part": self.word.part, "position": self.word.index, "from": self.word.text, "to": self.new}


def words_of(loaded: LoadedModel, texts: tuple[str, ...], parts: Iterable[int]) -> list[Word]:
    """The editable words of the texts numbered `parts`, in order; special tokens left out."""
    specials = sorted({str(t) for t in loaded.tokenizer.all_special_tokens if t}, key=len, reverse=True)
    pattern = re.compile("|".join([*(re.escape(s) for s in specials), r"\w+", r"[^\w\s]"]))
    found: list[Word] = []
    for part in parts:
        if part >= len(texts):
            continue
        index = 0
        for match in pattern.finditer(texts[part]):
            if match.group() in specials:
                continue
            found.append(Word(part, index, match.start(), match.end(), match.group()))
            index += 1
    return found


def apply(texts: tuple[str, ...], edits: Iterable[Edit]) -> tuple[str, ...]:
    """The texts with every edit made (right to left, so earlier spans stay where they were)."""
    out = list(texts)
    for edit in sorted(edits, key=lambda e: (e.word.part, e.word.start), reverse=True):
        text, start, end = out[edit.word.part], edit.word.start, edit.word.end
        if not edit.new:  # a removal takes one neighbouring space with it
            if start > 0 and text[start - 1] == " ":
                start -= 1
            elif end < len(text) and text[end] == " ":
                end += 1
        out[edit.word.part] = text[:start] + edit.new + text[end:]
    return tuple(out)


def cased(loaded: LoadedModel, original: str, word: str) -> str:
    """A proposed word written as the original was (capital first letter) when the model ignores case."""
    if getattr(loaded.tokenizer, "do_lower_case", False) and original[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def word_ids(loaded: LoadedModel) -> Any:
    """Vocabulary ids that are whole words: letters only, the start of a word (no ##piece, no special
    token, no [unused]); a bool tensor over the vocabulary, built once per tokenizer."""
    import torch

    key = "whatif:word-ids"
    if key not in loaded.extras:
        tokenizer = loaded.tokenizer
        vocab = tokenizer.get_vocab()
        size = max(len(tokenizer), max(vocab.values(), default=-1) + 1)
        marked = any(token.startswith(("Ġ", "▁")) for token in list(vocab)[:2000])  # BPE/Unigram word starts
        allowed = torch.zeros(size, dtype=torch.bool)
        specials = set(tokenizer.all_special_ids)
        for token, index in vocab.items():
            if index in specials or token.startswith("##"):
                continue
            if marked:
                if not token.startswith(("Ġ", "▁")):
                    continue
                token = token[1:]
            if token.isalpha():
                allowed[index] = True
        loaded.extras[key] = allowed
    return loaded.extras[key]


def word_text(loaded: LoadedModel, token_id: int) -> str:
    """The text a whole-word vocabulary entry stands for."""
    return str(loaded.tokenizer.decode([token_id])).strip()

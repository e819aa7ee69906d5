"""What a trace found: the heatmaps as plain numbers, with the words a person reads for each cell."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bertstudio.core.notes import Note

Row = tuple[float | None, ...]  # None: a position with no counterpart in the corrupted input


@dataclass(frozen=True)
class PatchResult:
    """Target probabilities of the corrupted run with one clean activation copied in.

    `states[l][p]`: hidden state l (0 = the embeddings' output, l = layer l's output) at the clean
    input's position p; `heads[l][h]`: head h's slice of layer l's attention context at every
    position; `layers[l]`: every head of layer l at once (the whole attention sub-layer)."""

    task: str
    target: Any
    target_label: str
    clean_score: float
    corrupted_score: float
    clean_tokens: tuple[str, ...]  # the positions a person sees (padding left out), the states' columns
    corrupted_tokens: tuple[str, ...]
    differing: tuple[int, ...]  # clean positions that differ (or were noised, or have no counterpart)
    counterpart: tuple[int | None, ...]  # per clean position: the corrupted position patched from it
    states: tuple[Row, ...] | None  # None: not computed (see notes)
    heads: tuple[tuple[float, ...], ...]
    layers: tuple[float, ...]
    method: str = "exact"  # or "attribution" (the gradient-based linear approximation)
    agreement: float | None = None  # attribution: Spearman's rho with exact patching on a sample
    agreement_cells: int = 0
    corruption: str = "input"  # or "noise"
    same_length: bool = True
    notes: tuple[Note, ...] = field(default=())

    def restored(self, value: float | None) -> float | None:
        """Normalised restoration: 0 = the corrupted score, 1 = the clean one (None: undefined)."""
        gap = self.clean_score - self.corrupted_score
        if value is None or abs(gap) < 1e-9:
            return None
        return (value - self.corrupted_score) / gap

    def state_words(self, level: int, position: int) -> str:
        """One state cell in words."""
        value = self.states[level][position] if self.states is not None else None
        token = self.clean_tokens[position]
        where = "the embeddings' output" if level == 0 else f"layer {level}'s state"
        if value is None:
            return f"'{token}' has no counterpart in the corrupted input, so its state is not patched."
        return f"Copying {where} at '{token}' (position {position}) from the clean run {self._effect(value)}."

    def head_words(self, layer: int, head: int) -> str:
        return (f"Copying head {layer}:{head} (layer:head from 0, its attention output at every position) from "
                f"the clean run {self._effect(self.heads[layer][head])}.")

    def _effect(self, value: float) -> str:
        restored = self.restored(value)
        share = "" if restored is None else f"restores {restored:.0%} of the clean answer: "
        return f"{share}{self.target_label} = {value:.4f} (clean {self.clean_score:.4f}, corrupted " \
               f"{self.corrupted_score:.4f})"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "task": self.task, "target": self.target, "target_label": self.target_label,
            "clean_score": self.clean_score, "corrupted_score": self.corrupted_score,
            "clean_tokens": list(self.clean_tokens), "corrupted_tokens": list(self.corrupted_tokens),
            "differing": list(self.differing), "counterpart": list(self.counterpart),
            "same_length": self.same_length, "corruption": self.corruption, "method": self.method,
            "states": None if self.states is None else [list(row) for row in self.states],
            "heads": [list(row) for row in self.heads], "layers": list(self.layers),
            "notes": [note.to_json() for note in self.notes],
        }
        if self.method == "attribution":
            data["agreement"] = {"spearman": self.agreement, "cells": self.agreement_cells}
        return data

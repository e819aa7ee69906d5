"""What a trace works on: the corruption by noise, and both runs ready to patch (shared by exact
patching in trace.py and its gradient estimate in attribution.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bertstudio.core.explain.targets import Prepared
from bertstudio.core.patching.hooks import Recording

NOISE_SCALE = 3.0  # x the embeddings' standard deviation (ROME)


@dataclass(frozen=True)
class Noise:
    """Gaussian noise on the word embeddings of these positions of the clean input (as shown: padding
    left out), `scale` x the embedding matrix's standard deviation, seeded: the corruption for someone
    without a counterfactual."""

    positions: tuple[int, ...]
    seed: int = 0
    scale: float = NOISE_SCALE


@dataclass
class Setup:
    """Both runs, ready to patch: inputs, readers, the clean recording and how positions pair."""

    clean: Prepared
    corrupted_inputs: dict[str, Any]
    corrupted_tokens: tuple[str, ...]
    read: Callable[[Any], Any]  # model outputs of corrupted copies -> (batch,) target probabilities
    noise: Any  # rows x tokens x embedding width, or None
    pairs: list[tuple[int, int]]  # (clean flat position, corrupted flat position) that are patched
    columns: tuple[int, ...]  # clean flat positions shown (attention_mask == 1)
    counterpart: tuple[int | None, ...]
    differing: tuple[int, ...]  # column indices
    same_length: bool
    recording: Recording
    clean_score: float
    corrupted_score: float
    width: int  # tokens per sequence
    sequences: int  # sequences per input (multiple choice: one per choice)
    corrupted_recording: Recording | None = None  # the corrupted run's own states and contexts

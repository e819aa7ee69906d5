"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
MODELS = Path(os.environ.get("BERTSTUDIO_TEST_MODELS", Path.home() / ".cache" / "bertstudio-test-models"))


@dataclass(frozen=True)
class Row:
    name: str
    ours: float  # seconds
    raw: float | None = None  # seconds, raw transformers on the same input
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.ours / self.raw if self.raw else None


def median_time(func: Callable[[], object], repeats: int = 20, warmup: int = 3) -> float:
    for _ in range(warmup):
        func()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved(ours: Callable[[], object], raw: Callable[[], object], repeats: int = 30) -> tuple[float, float]:
    """Median times of two callables measured alternately, so drift hits both alike."""
    for _ in range(3):
        ours(), raw()
    a, b = [], []
    for _ in range(repeats):
        start = time.perf_counter(); ours(); a.append(time.perf_counter() - start)  # noqa: E702
        start = time.perf_counter(); raw(); b.append(time.perf_counter() - start)  # noqa: E702
    return statistics.median(a), statistics.median(b)

"""Faithfulness of every attribution method on the trained MiniLM sentiment head, and how far the two
Integrated Gradients baselines agree.

Model: tests/fixtures/trained_sentiment.py (all-MiniLM-L6-v2 + a two-label head trained on the demo
reviews), its five held-out sentences, each explained for the model's own answer by the seven
methods of "All methods" (explain.compare.ALL: gradient, gradient x input, IG with the [PAD] and the
zero baseline at 50 steps, occlusion, LIME and Kernel SHAP with 256 samples, seed 0), each with
ERASER's comprehensiveness and sufficiency at 1/5/10/20/50 % (explain.faithfulness). Printed: AOPC
comprehensiveness (higher: the top tokens carry the prediction) and AOPC sufficiency (lower: the top
tokens alone keep it) averaged over the sentences, and Spearman between IG [PAD] and IG zero per
sentence. The timing row is one "All methods + faithfulness" per sentence (no raw counterpart).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from common import MODELS, Row

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def measure() -> tuple[list[str], dict[str, list[tuple[float, float]]], list[float | None], list[float]]:
    """(method names, per method the (AOPC comp., AOPC suff.) per sentence, IG pad-vs-zero Spearman, seconds)."""
    from bertstudio.core.explain.compare import ALL, all_methods
    from bertstudio.core.models import LoadRequest, load_model
    from tests.fixtures.trained_sentiment import HELD_OUT, trained_sentiment

    loaded = load_model(LoadRequest(str(trained_sentiment(MODELS / "all-minilm-l6-v2")), "classification"))
    pad, zero = ALL.index(("integrated-gradients", "pad")), ALL.index(("integrated-gradients", "zero"))
    names: list[str] = []
    table: dict[str, list[tuple[float, float]]] = {}
    agreement: list[float | None] = []
    seconds = []
    for text, _label, _words in HELD_OUT:
        start = time.perf_counter()
        found = all_methods(loaded, "classification", (text,), faithfulness=True)
        seconds.append(time.perf_counter() - start)
        names = list(found.names)
        for name, explanation in zip(found.names, found.explanations, strict=True):
            f = explanation.faithfulness
            table.setdefault(name, []).append((f.aopc_comprehensiveness, f.aopc_sufficiency))
        agreement.append(found.agreement[pad][zero])
    return names, table, agreement, seconds


def report(names: list[str], table: dict[str, list[tuple[float, float]]], agreement: list[float | None]) -> str:
    lines = [f"{'method':<40} {'AOPC comp.':>10} {'AOPC suff.':>10}"]
    for name in names:
        comp = statistics.mean(c for c, _ in table[name])
        suff = statistics.mean(s for _, s in table[name])
        lines.append(f"{name:<40} {comp:10.3f} {suff:10.3f}")
    shown = ", ".join("—" if a is None else f"{a:.2f}" for a in agreement)
    known = [a for a in agreement if a is not None]
    lines.append(f"Spearman IG [PAD] vs IG zero per sentence: {shown}"
                 + (f"; mean {statistics.mean(known):.2f}" if known else ""))
    return "\n".join(lines)


def rows() -> list[Row]:
    names, table, agreement, seconds = measure()
    print(report(names, table, agreement), file=sys.stderr)
    best = max(names, key=lambda n: statistics.mean(c for c, _ in table[n]))
    return [Row("explain: all 7 methods + faithfulness, MiniLM sentiment (per sentence)", statistics.median(seconds),
                None, f"highest AOPC comprehensiveness: {best}")]


if __name__ == "__main__":
    names, table, agreement, seconds = measure()
    print(report(names, table, agreement))
    print(f"all methods + faithfulness: median {statistics.median(seconds):.2f} s per sentence (shared 2-core machine)")

"""Run every bench/bench_*.py and print one table: bertstudio vs raw transformers, as ratios.

Each module defines `rows() -> list[Row]`; a Row times our path and the raw path in the same
run on the same model and input (median of repeats), so the ratio is what counts.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import Row  # noqa: E402


def main(selected: list[str]) -> int:
    modules = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if selected:
        modules = [m for m in modules if any(s in m for s in selected)]
    rows: list[Row] = []
    for name in modules:
        print(f"[bench] {name}…", file=sys.stderr, flush=True)
        rows += importlib.import_module(name).rows()
    width = max([len(r.name) for r in rows] + [10])
    print(f"{'measure':<{width}}  {'bertstudio':>12}  {'raw':>12}  {'ratio':>7}  note")
    for row in rows:
        raw = f"{row.raw * 1000:10.1f}ms" if row.raw is not None else f"{'-':>12}"
        ratio = f"{row.ratio:7.3f}" if row.ratio is not None else f"{'-':>7}"
        print(f"{row.name:<{width}}  {row.ours * 1000:10.1f}ms  {raw}  {ratio}  {row.note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""`evaluate --compare`: what compression costs beside the agreement and McNemar's test. With --json
the report's keys ("linear_cka", "salience_agreement", "size", "speed") join the output object;
as text, a short table (core/compression/report.py measures)."""

from __future__ import annotations

import sys
from typing import Any

from bertstudio.cli.common import stderr_control
from bertstudio.cli.task_command import clear_progress_line


def compression_of(request: Any, comparison: Any, compare_source: str) -> Any:
    from bertstudio.core.compression.report import compression_job

    report = compression_job(request, comparison, compare_source, stderr_control())
    clear_progress_line()
    for note in report.notes:
        print(f"{note.level}: {note.text}", file=sys.stderr)
    return report


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} MB"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def print_report(report: Any) -> None:
    """Size, speed, salience agreement and the CKA matrix (rows: A's hidden states, columns: B's)."""
    a, b = report.size_a, report.size_b
    print(f"\n  {'what compression costs':<26} {'A':>14} {'B':>14}")
    print(f"  {'parameters':<26} {a.parameters:>14,} {b.parameters:>14,}")
    print(f"  {'size on disk':<26} {_mb(a.disk_mb):>14} {_mb(b.disk_mb):>14}")
    print(f"  {'size in memory':<26} {_mb(a.memory_mb):>14} {_mb(b.memory_mb):>14}")
    print(f"  {'rows/s (evaluate)':<26} {_rate(report.speed_a.rows_per_second):>14} "
          f"{_rate(report.speed_b.rows_per_second):>14}")
    print(f"  {'rows/s (forward passes)':<26} {_rate(report.speed_a.forward_rows_per_second):>14} "
          f"{_rate(report.speed_b.forward_rows_per_second):>14}")
    salience = report.salience
    if salience is not None and salience.mean is not None:
        print(f"\n  salience agreement ({salience.method}, Spearman, {len(salience.rows)} rows): "
              f"mean {salience.mean:.3f}")
    matrix = report.cka
    print(f"\n  linear CKA on {report.cka_rows} rows (rows: hidden states of A, columns: of B; 0 = embeddings)")
    print("      " + "".join(f"{j:>6}" for j in range(matrix.shape[1])))
    for i, row in enumerate(matrix):
        print(f"  {i:>4}" + "".join(f"{value:6.2f}" if value == value else f"{'--':>6}" for value in row))
    matches = report.best_matches
    print("  B's hidden states most like A's: " + (", ".join(f"{j}->{i}" for j, i in enumerate(matches)) if matches
                                                   else "undefined (too few rows)"))

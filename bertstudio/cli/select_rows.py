"""bertstudio select --model M --pool FILE --count N --strategy entropy|margin|least-confidence [--json]

Active learning: the N unlabelled pool rows the model is least sure of, to label next. The pool is
scored through the batch engine. --json: {"rows": [{"row", "score", "text", "predicted"}, ...]},
most uncertain first, `row` 0-based in the pool file.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    from bertstudio.core.curation.active_learning import STRATEGIES

    parser = subparsers.add_parser("select", help="the unlabelled rows a classifier is least sure of (active learning)")
    parser.add_argument("--model", required=True, metavar="SRC", help="the trained classifier (folder or Hub id)")
    parser.add_argument("--pool", required=True, metavar="FILE", help="CSV/TSV/JSONL of unlabelled texts")
    parser.add_argument("--count", type=int, required=True, metavar="N", help="how many rows to choose")
    parser.add_argument("--strategy", choices=STRATEGIES, default="entropy",
                        help="uncertainty: entropy (default), margin (1 - top two's gap) or least-confidence "
                             "(1 - top probability)")
    parser.add_argument("--text-column", help="the pool's text column (default: detected)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.cli.common import print_json, stderr_control
    from bertstudio.cli.task_command import clear_progress_line
    from bertstudio.core.curation.active_learning import select

    chosen = select(args.model, args.pool, args.count, args.strategy, args.device, args.text_column,
                    stderr_control())
    clear_progress_line()
    if args.json:
        print_json({"rows": [row.to_json() for row in chosen]})
        return 0
    print(f"{len(chosen)} row(s) to label next ({args.strategy}, most uncertain first)")
    for row in chosen:
        text = row.text if len(row.text) <= 80 else row.text[:79] + "…"
        print(f"  row {row.row}  score {row.score:.4f}  predicted '{row.predicted}'  {text}")
    return 0

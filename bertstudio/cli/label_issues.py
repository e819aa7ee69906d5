"""bertstudio label-issues --data FILE --probabilities OOF.csv [--multi-label] [--json]

The rows whose given label looks wrong: exactly the ones cleanlab's find_label_issues flags on the
out-of-fold probabilities (`train --cv K` writes them), least self-confident first. --json:
{"issues": [{"row", "given", "suggested", "self_confidence"}, ...]}, `row` the 0-based data row.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

SHOWN = 50


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("label-issues", help="rows whose label looks wrong (cleanlab, on out-of-fold "
                                                        "probabilities from train --cv)")
    parser.add_argument("--data", required=True, metavar="FILE", help="the labelled file cross-validated")
    parser.add_argument("--probabilities", required=True, metavar="OOF.csv",
                        help="its out-of-fold probabilities (the oof.csv that train --cv wrote)")
    parser.add_argument("--text-column", help="the text column (default: detected)")
    parser.add_argument("--label-column", help="the label column (default: detected)")
    parser.add_argument("--multi-label", action="store_true", help="labels are several classes joined by |")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.cli.common import print_json
    from bertstudio.core.curation.label_issues import issues_in_files

    issues, _oof = issues_in_files(args.data, args.probabilities, args.label_column, args.text_column,
                                   args.multi_label)
    if args.json:
        print_json({"issues": [issue.to_json() for issue in issues]})
    else:
        print_issues(issues)
    return 0


def print_issues(issues: Sequence[Any]) -> None:
    """One line per suspected row, least self-confident first (the first SHOWN; --json has them all)."""
    print(f"{len(issues)} row(s) look mislabelled")
    for issue in issues[:SHOWN]:
        print(f"  row {issue.row}: given '{issue.given}', suggested '{issue.suggested}', "
              f"self-confidence {issue.self_confidence:.3f}")
    if len(issues) > SHOWN:
        print(f"  … and {len(issues) - SHOWN} more (--json lists them all)")

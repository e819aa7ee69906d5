"""Writes the demo datasets in this folder (run once; the outputs are committed).

Small on purpose: each task trains on a CPU in about a minute. All text is written for
this project (templates over hand-written word lists and sentences), so it is free to ship.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(7)

# -- text classification: short product and place reviews, positive / negative ---------------
ITEMS = ["movie", "book", "phone", "laptop", "restaurant", "hotel", "camera", "album", "game", "coffee",
         "pizza", "service", "concert", "sofa", "bike", "jacket", "museum", "train ride", "app", "headset"]
EVAL_ITEMS = ["novel", "tablet", "cafe", "guesthouse", "speaker", "backpack", "theatre show", "keyboard"]
POSITIVE = ["was wonderful", "is excellent", "made me really happy", "exceeded my expectations",
            "was a delight from start to finish", "is the best I have ever had", "works perfectly",
            "was great value for money", "left me smiling", "is fantastic and I would buy it again",
            "was lovely", "is brilliant", "felt warm and friendly", "was superb"]
NEGATIVE = ["was terrible", "is awful", "made me angry", "was a complete waste of money",
            "broke after one day", "is the worst I have ever had", "does not work at all",
            "was boring and far too long", "left me disappointed", "is rude and slow",
            "was dirty", "is useless", "felt cold and unfriendly", "was horrible"]
EVAL_POSITIVE = ["was amazing", "is a real pleasure", "was perfect in every way", "is truly great"]
EVAL_NEGATIVE = ["was dreadful", "is a real let-down", "was broken and ugly", "is truly bad"]
OPENERS = ["", "Honestly, ", "Overall, ", "In short, ", "To be fair, "]


def reviews(items: list[str], positive: list[str], negative: list[str], count: int) -> list[tuple[str, str]]:
    rows = []
    for i in range(count):
        label = "positive" if i % 2 == 0 else "negative"
        phrase = rng.choice(positive if label == "positive" else negative)
        opener = rng.choice(OPENERS)
        text = f"{opener}the {rng.choice(items)} {phrase}."
        rows.append((text[0].upper() + text[1:], label))
    return rows


def write_csv(name: str, rows: list[tuple[str, str]]) -> None:
    with (HERE / name).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows(rows)


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
    write_csv("reviews_train.csv", reviews(ITEMS, POSITIVE, NEGATIVE, 240))
    write_csv("reviews_eval.csv", reviews(EVAL_ITEMS, EVAL_POSITIVE, EVAL_NEGATIVE, 60))
    write_conll("ner_train.conll", ner_sentences(200))
    write_conll("ner_eval.conll", ner_sentences(40))
    (HERE / "pretraining_corpus.txt").write_text(corpus(), encoding="utf-8")
    (HERE / "pretraining_heldout.txt").write_text(
        "\n\n".join("\n".join(s) for s in HELD_OUT.values()) + "\n", encoding="utf-8")

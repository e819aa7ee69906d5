"""Seeded perturbations for INV and DIR tests, written here: CheckList and nlpaug, which had them,
are unmaintained, and the maintained augmenters pull in models or NLTK data. Each function takes a
text and a `random.Random` and returns a changed text, or None where it does not apply (no name in
the text to swap); the same seed gives the same pairs on every machine.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

FIRST_NAMES = (
    "John", "Mary", "Anna", "Klaus", "David", "Maria", "James", "Sarah", "Ahmed", "Fatima", "Wei", "Mei",
    "Carlos", "Lucia", "Ivan", "Olga", "Kwame", "Amara", "Raj", "Priya", "Kenji", "Yuki", "Pierre", "Sophie",
    "Liam", "Emma", "Noah", "Olivia", "Omar", "Leila",
)
CITIES = (
    "Paris", "London", "Berlin", "Rome", "Madrid", "Vienna", "Tokyo", "Lagos", "Cairo", "Lima", "Oslo",
    "Dublin", "Toronto", "Sydney", "Mumbai", "Nairobi", "Seoul", "Boston", "Chicago", "Prague",
)
COUNTRIES = ("France", "Germany", "Italy", "Spain", "Japan", "Kenya", "Brazil", "Canada", "India", "Egypt")
LOCATIONS = CITIES + COUNTRIES
# Sentences and openers without sentiment or negation (CheckList's "add irrelevant" / neutral vocabulary).
NEUTRAL_SUFFIXES = (
    "I saw it on Tuesday.", "It came in a box.", "I read about it online.", "My friend has one too.",
    "We talked about it at lunch.", "It is the second one I have.", "I bought it in March.",
)
NEUTRAL_PREFIXES = ("Well,", "So,", "Anyway,", "To be clear,", "As I said,", "For the record,")
DISTRACTORS = (
    "{name} visited {place} in {year}.", "In {year}, {name} moved to {place}.",
    "{name} was born in {place} in {year}.", "The museum in {place} opened in {year}, said {name}.",
)
CONTRACTIONS = {
    "is not": "isn't", "are not": "aren't", "was not": "wasn't", "were not": "weren't", "do not": "don't",
    "does not": "doesn't", "did not": "didn't", "can not": "can't", "cannot": "can't", "could not": "couldn't",
    "would not": "wouldn't", "should not": "shouldn't", "will not": "won't", "have not": "haven't",
    "has not": "hasn't", "it is": "it's", "that is": "that's", "I am": "I'm", "I have": "I've",
    "you are": "you're", "they are": "they're", "we are": "we're", "what is": "what's", "who is": "who's",
    "where is": "where's", "there is": "there's",
}
POSITIVE_WORDS = ("good", "great", "excellent", "amazing", "wonderful", "fantastic", "lovely", "brilliant", "nice",
                  "perfect", "pleasant", "superb")
NEGATIVE_WORDS = ("bad", "terrible", "awful", "horrible", "poor", "disappointing", "dreadful", "boring", "ugly",
                  "weak", "unpleasant", "mediocre")
INTENSIFIERS = ("very", "really", "extremely", "incredibly", "truly", "absolutely")
QUESTION_FORMS = ("Can you tell me: {q}", "I would like to know: {q}", "Quick question: {q}", "{q} Do you know?")

_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def _swap_from(*groups: Sequence[str]) -> Callable[[str, random.Random], str | None]:
    """A perturbation that replaces every occurrence of one listed word with another of its group
    (a city with a city, a country with a country)."""
    group_of = {word: tuple(group) for group in groups for word in group}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, group_of)) + r")\b")

    def swap(text: str, rng: random.Random) -> str | None:
        found = sorted({m.group(0) for m in pattern.finditer(text)})
        if not found:
            return None
        old = rng.choice(found)
        others = [word for word in group_of[old] if word != old and word not in found]
        if not others:
            return None
        new = rng.choice(others)
        return re.sub(rf"\b{re.escape(old)}\b", new, text)

    return swap


def typos(text: str, rng: random.Random) -> str | None:
    """Two neighbouring letters of one word swapped (CheckList's add_typos)."""
    spans = [m.span() for m in _WORD.finditer(text) if m.end() - m.start() >= 4 and m.group(0).isalpha()]
    if not spans:
        return None
    start, end = rng.choice(spans)
    i = rng.randrange(start, end - 1)
    if text[i] == text[i + 1]:
        i = next((j for j in range(start, end - 1) if text[j] != text[j + 1]), i)
    if text[i] == text[i + 1]:
        return None
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def numbers(text: str, rng: random.Random) -> str | None:
    """One whole number replaced with another between half and twice it (CheckList's change_number)."""
    found = list(_NUMBER.finditer(text))
    if not found:
        return None
    match = rng.choice(found)
    value = int(match.group(0))
    low, high = max(1, value // 2), max(value * 2, value + 2)
    new = value
    while new == value:  # high > value + 1, so another number is always there
        new = rng.randint(low, high)
    return text[:match.start()] + str(new) + text[match.end():]


def punctuation(text: str, rng: random.Random) -> str | None:
    """The final punctuation taken away, or (where there is none) a full stop or '!' added."""
    stripped = text.rstrip()
    if stripped and stripped[-1] in ".!?":
        return stripped.rstrip(".!?")
    return stripped + rng.choice((".", "!"))


def contractions(text: str, rng: random.Random) -> str | None:
    """Contract what can be ('is not' -> "isn't") or, where nothing can, expand a contraction."""
    contract = [(long, short) for long, short in CONTRACTIONS.items() if re.search(rf"\b{long}\b", text, re.I)]
    expand = [(short, long) for long, short in CONTRACTIONS.items() if re.search(rf"\b{short}(?!\w)", text, re.I)]
    choices = contract or expand
    if not choices:
        return None
    old, new = rng.choice(choices)

    def keep_case(match: re.Match[str]) -> str:
        return new[0].upper() + new[1:] if match.group(0)[0].isupper() else new

    return re.sub(rf"\b{re.escape(old)}(?!\w)", keep_case, text, count=1, flags=re.I)


def neutral(text: str, rng: random.Random) -> str | None:
    """A sentence without sentiment added at the end, or an opener at the start."""
    if rng.random() < 0.5:
        return f"{text.rstrip()} {rng.choice(NEUTRAL_SUFFIXES)}"
    opener = rng.choice(NEUTRAL_PREFIXES)
    return f"{opener} {text[:1].lower()}{text[1:]}" if not text[:2].isupper() else f"{opener} {text}"


def intensifiers(text: str, rng: random.Random) -> str | None:
    """An intensifier ('very', 'truly'...) put before the first sentiment word (for DIR tests)."""
    match = re.search(r"\b(" + "|".join(POSITIVE_WORDS + NEGATIVE_WORDS) + r")\b", text, re.I)
    if match is None:
        return None
    return text[:match.start()] + rng.choice(INTENSIFIERS) + " " + text[match.start():]


def paraphrase(text: str, rng: random.Random) -> str | None:
    """A question asked another way: a contraction, or a polite frame around it."""
    if rng.random() < 0.3:
        changed = contractions(text, rng)
        if changed is not None:
            return changed
    return rng.choice(QUESTION_FORMS).format(q=text.strip())


def distractor(text: str, rng: random.Random) -> str | None:
    """A sentence about other people, places and years added to the end (Jia & Liang's adversarial
    SQuAD adds a sentence that looks like an answer but is not)."""
    sentence = rng.choice(DISTRACTORS).format(name=rng.choice(FIRST_NAMES), place=rng.choice(LOCATIONS),
                                              year=rng.randrange(1900, 2025))
    return f"{text.rstrip()} {sentence}"


PERTURBATIONS: dict[str, Callable[[str, random.Random], str | None]] = {
    "typos": typos, "names": _swap_from(FIRST_NAMES), "locations": _swap_from(CITIES, COUNTRIES), "numbers": numbers,
    "punctuation": punctuation, "contractions": contractions, "neutral": neutral, "intensifiers": intensifiers,
    "paraphrase": paraphrase, "distractor": distractor,
}
DEFAULT_PART = {"distractor": -1}  # the part a perturbation changes unless a test says "on": the context


def perturbed(name: str, text: str, rng: random.Random, samples: int) -> list[str]:
    """Up to `samples` distinct changed texts (fewer where the perturbation runs out of changes)."""
    change = PERTURBATIONS[name]
    found: list[str] = []
    for _ in range(samples * 4):
        new = change(text, rng)
        if new is None:
            break
        if new != text and new not in found:
            found.append(new)
            if len(found) == samples:
                break
    return found

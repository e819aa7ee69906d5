"""SQuAD exact match and F1 with the official normalisation (v1.1, and v2.0's no-answer rule).

The `evaluate` package's "squad"/"squad_v2" metrics download their scripts from the Hub,
which this app cannot rely on (offline use), so the official script's functions are
restated here: `normalize_answer`, `compute_exact`, `compute_f1` from the SQuAD v2.0
evaluation script (identical to v1.1's for answerable questions). A gold answer list that is
empty (or holds only "") means "no answer": only an empty prediction scores, as in v2.0.
Scores are 0..1 per question and so are the dataset numbers, their mean: one scale with every other
score here (the official SQuAD script prints the same means x 100). Train and Evaluate showed 0.12
and 12.02 for the same model before.
`read_squad` reads the file format, checking the type of every level.
"""

from __future__ import annotations

import collections
import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.limits import MAX_ROWS

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, drop punctuation and the articles a/an/the, collapse white space."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def get_tokens(text: str) -> list[str]:
    return normalize_answer(text).split() if text else []


def compute_exact(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def compute_f1(gold: str, prediction: str) -> float:
    gold_tokens, pred_tokens = get_tokens(gold), get_tokens(prediction)
    if not gold_tokens or not pred_tokens:
        # No answer on either side: F1 is 1 if both agree there is none, else 0 (v2.0).
        return float(gold_tokens == pred_tokens)
    common = collections.Counter(gold_tokens) & collections.Counter(pred_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _golds(answers: Sequence[str]) -> list[str]:
    """The official rule: gold answers that normalise to nothing are dropped; none left = no answer."""
    kept = [a for a in answers if normalize_answer(a)]
    return kept or [""]


def exact_match(answers: Sequence[str], prediction: str) -> int:
    """Best exact match over the gold answers (0 or 1)."""
    return max(compute_exact(a, prediction) for a in _golds(answers))


def f1(answers: Sequence[str], prediction: str) -> float:
    """Best token F1 over the gold answers (0..1)."""
    return max(compute_f1(a, prediction) for a in _golds(answers))


def squad_scores(golds: Sequence[Sequence[str]], predictions: Sequence[str]) -> dict[str, float]:
    """exact_match and f1 over a dataset, 0-1; with no-answer questions also the HasAns/NoAns parts."""
    if len(golds) != len(predictions):
        raise ValueError("one prediction per question")
    if not golds:
        return {"exact_match": 0.0, "f1": 0.0}
    exact = [exact_match(g, p) for g, p in zip(golds, predictions, strict=True)]
    f1s = [f1(g, p) for g, p in zip(golds, predictions, strict=True)]
    scores = {"exact_match": sum(exact) / len(exact), "f1": sum(f1s) / len(f1s)}
    has = [i for i, g in enumerate(golds) if _golds(g) != [""]]
    if len(has) < len(golds):
        no = [i for i in range(len(golds)) if i not in set(has)]
        for name, part in (("has_answer", has), ("no_answer", no)):
            if part:
                scores[f"{name}_exact"] = sum(exact[i] for i in part) / len(part)
                scores[f"{name}_f1"] = sum(f1s[i] for i in part) / len(part)
                scores[f"{name}_total"] = float(len(part))
    return scores


# -- the file: SQuAD JSON, every level checked ----------------------------------------------------
SQUAD_SHAPE = 'Shape: {"data": [{"paragraphs": [{"context", "qas": [{"question", "answers": [{"text"}]}]}]}]}.'


@dataclass(frozen=True)
class SquadQuestion:
    line: int
    question: str
    context: str
    answers: tuple[str, ...]  # empty: no answer (is_impossible, or an empty list)
    title: str = ""


class _Lines:
    """Line numbers of questions found in file order: one forward scan in all, not one per question."""

    def __init__(self, raw: str) -> None:
        self.raw, self.at, self.line = raw, 0, 1

    def of(self, text: object) -> int:
        if not isinstance(text, str) or not text:
            return self.line
        found = self.raw.find(json.dumps(text)[1:-1][:200], self.at)
        if found >= 0:
            self.line += self.raw.count("\n", self.at, found)
            self.at = found
        return self.line


def _answers(qa: dict[str, Any], where: str) -> tuple[str, ...] | str:
    """The answer texts, or the problem (a string) when the entry is malformed."""
    impossible = qa.get("is_impossible", False)
    if not isinstance(impossible, bool):
        return f"{where}.is_impossible must be true or false"
    answers = qa.get("answers", [] if impossible else None)
    if not isinstance(answers, list):
        return f"{where} needs an \"answers\" list"
    if not all(isinstance(a, dict) and isinstance(a.get("text"), str) for a in answers):
        return f"{where}.answers must be objects with a \"text\" string"
    return () if impossible else tuple(a["text"] for a in answers)


def read_squad(path: Path) -> tuple[list[SquadQuestion], list[tuple[int, str]]]:
    """Every question of a SQuAD JSON file, and (line, problem) for every malformed entry: a wrong
    type at any level is a problem of that entry, never a crash. Bounded in size, depth and rows."""
    from bertstudio.core.datafiles import parse_json, too_many_rows
    from bertstudio.core.files import read_text

    raw = read_text(path, "data file")
    document = parse_json(raw, path.name)
    entries = document.get("data") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise InputError(f"{path.name} is not SQuAD JSON: it needs a top-level \"data\" list.", hint=SQUAD_SHAPE)
    lines = _Lines(raw)
    found: list[SquadQuestion] = []
    issues: list[tuple[int, str]] = []
    for e, entry in enumerate(entries):
        paragraphs = entry.get("paragraphs") if isinstance(entry, dict) else None
        if not isinstance(paragraphs, list):
            issues.append((lines.line, f"data[{e}] needs a \"paragraphs\" list"))
            continue
        title = entry.get("title")
        for p, paragraph in enumerate(paragraphs):
            where = f"data[{e}].paragraphs[{p}]"
            context = paragraph.get("context") if isinstance(paragraph, dict) else None
            qas = paragraph.get("qas") if isinstance(paragraph, dict) else None
            if not isinstance(context, str) or not context.strip() or not isinstance(qas, list):
                issues.append((lines.of(context), f"{where} needs a \"context\" text and a \"qas\" list"))
                continue
            for q, qa in enumerate(qas):
                question = qa.get("question") if isinstance(qa, dict) else None
                line = lines.of(question)
                answers = _answers(qa, f"{where}.qas[{q}]") if isinstance(qa, dict) else ()
                if not isinstance(question, str) or not question.strip():
                    issues.append((line, f"{where}.qas[{q}] needs a \"question\" text"))
                elif isinstance(answers, str):
                    issues.append((line, answers))
                elif len(found) >= MAX_ROWS:
                    raise too_many_rows(path)
                else:
                    found.append(SquadQuestion(line, question.strip(), context, answers,
                                               title if isinstance(title, str) else ""))
    return found, issues

"""Classification's Copy as Python: the text-classification pipeline's every label per text, for one
text, a pair, pasted rows or the table the app read."""

from __future__ import annotations

from typing import Any

from bertstudio.core.snippets import field, lines, script

_CLASSIFIER = '''from transformers import pipeline

MODEL = {model}
classify = pipeline("text-classification", model=MODEL)
'''
_BATCH = '''for text, scores in zip(texts, classify(texts, top_k=None)):
    print(text)
    for s in scores:
        print(f"  {s['label']}\\t{s['score']:.6f}")
'''
_ONE = '''for s in classify(TEXT, top_k=None):  # every label, best first
    print(f"{s['label']}\\t{s['score']:.6f}")
'''


def table_reader(path: str, column: Any) -> str:
    """Python that reads the rows the app read: lines of a .txt, a CSV/TSV column ('text' or the first)."""
    if path.lower().endswith(".txt") and not column:
        return script("PATH = {path}\n"
                       "texts = [line.strip() for line in open(PATH, encoding='utf-8') if line.strip()]\n",
                       path=path)
    delimiter = "\t" if path.lower().endswith((".tsv", ".tab")) else ","
    reader = ("PATH = {path}\n"
              "rows = csv.DictReader(open(PATH, encoding='utf-8', newline=''), delimiter={delimiter})\n")
    if not column:
        return script(reader + "texts = [row.get('text', next(iter(row.values()))) for row in rows]\n",
                       path=path, delimiter=delimiter)
    return script(reader + "COLUMN = {column}\ntexts = [row[COLUMN] for row in rows]\n",
                   path=path, delimiter=delimiter, column=str(column))


def build(source: str, inputs: Any) -> str:
    texts, pair, path = field(inputs, "text", ""), field(inputs, "pair"), field(inputs, "path")
    head = script(_CLASSIFIER, model=source)
    if path and not texts:  # a table the app read in its worker: the same rows, read with csv
        return "import csv\n" + head + table_reader(str(path), field(inputs, "column")) + _BATCH
    if isinstance(texts, (list, tuple)) and len(texts) != 1:
        return head + script("texts = {texts}\n", texts=lines(texts)) + _BATCH
    text = str(texts[0]) if isinstance(texts, (list, tuple)) else str(texts)
    if pair and str(pair).strip():
        return head + script("TEXT = {{'text': {text}, 'text_pair': {pair}}}\n", text=text, pair=str(pair)) + _ONE
    return head + script("TEXT = {text}\n", text=text) + _ONE

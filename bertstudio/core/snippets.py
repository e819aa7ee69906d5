"""Copy as Python: a short transformers script that reproduces the numbers a tab shows.

Pipelines where the app uses one (fill-mask, NER, classification), the plain model and a
softmax where it does not (next sentence, multiple choice, QA, attention). Inputs are read
with getattr from the task's input dataclass (or a dict of the same fields), so a snippet
can be built from whatever a tab last ran. Each snippet prints one line per score.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_NAMES = {  # input field -> other names it goes by in task inputs and tab states
    "text": ("text", "sentence", "texts"),
    "pair": ("pair", "text_pair"),
    "top_k": ("top_k",),
    "sentence_a": ("sentence_a", "a"),
    "candidates": ("candidates", "sentence_b", "b"),
    "aggregation": ("aggregation", "aggregation_strategy", "strategy"),
    "question": ("question",),
    "context": ("context",),
    "prompt": ("prompt",),
    "choices": ("choices", "endings"),
}


def _field(inputs: Any, name: str, default: Any = None) -> Any:
    for alias in _NAMES.get(name, (name,)):
        value = inputs.get(alias) if isinstance(inputs, dict) else getattr(inputs, alias, None)
        if value is not None:
            return value
    return default


def _lines(value: Any) -> list[str]:
    """A list of strings from a list, or from text with one item per line."""
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    return [str(item) for item in value or ()]


def _fill_mask(source: str, inputs: Any) -> str:
    text, top_k = str(_field(inputs, "text", "")), int(_field(inputs, "top_k", 5))
    return f'''from transformers import pipeline

fill = pipeline("fill-mask", model={source!r})
text = {text!r}
found = fill(text, top_k={top_k})
for number, candidates in enumerate(found if isinstance(found[0], list) else [found], 1):
    for c in candidates:  # one block per mask, best first
        print(f"mask {{number}}\\t{{c['token_str']}}\\t{{c['score']:.6f}}")
'''


_BATCH = '''for text, scores in zip(texts, classify(texts, top_k=None)):
    print(text)
    for s in scores:
        print(f"  {s['label']}\\t{s['score']:.6f}")
'''


def _table_reader(path: str, column: Any) -> str:
    """Python that reads the rows the app read: lines of a .txt, a CSV/TSV column ('text' or the first)."""
    if path.lower().endswith(".txt"):
        return "texts = [line.strip() for line in open(path, encoding='utf-8') if line.strip()]\n"
    delimiter = "\t" if path.lower().endswith((".tsv", ".tab")) else ","
    pick = f"row[{str(column)!r}]" if column else "row.get('text', next(iter(row.values())))"
    return (f"rows = csv.DictReader(open(path, encoding='utf-8', newline=''), delimiter={delimiter!r})\n"
            f"texts = [{pick} for row in rows]\n")


def _classification(source: str, inputs: Any) -> str:
    texts = _field(inputs, "text", "")
    pair = _field(inputs, "pair")
    path = _field(inputs, "path")
    head = f'''from transformers import pipeline

classify = pipeline("text-classification", model={source!r})
'''
    if path and not texts:  # a table the app read in its worker: the same rows, read with csv
        return f"import csv\n{head}path = {str(path)!r}\n" + _table_reader(str(path), _field(inputs, "column")) + _BATCH
    if isinstance(texts, (list, tuple)) and len(texts) != 1:
        return head + f"texts = {list(map(str, texts))!r}\n" + _BATCH
    text = texts[0] if isinstance(texts, (list, tuple)) else str(texts)
    call = f"{{'text': {text!r}, 'text_pair': {str(pair)!r}}}" if pair and str(pair).strip() else repr(text)
    return head + f'''for s in classify({call}, top_k=None):  # every label, best first
    print(f"{{s['label']}}\\t{{s['score']:.6f}}")
'''


def _ner(source: str, inputs: Any) -> str:
    text, aggregation = str(_field(inputs, "text", "")), str(_field(inputs, "aggregation", "simple"))
    return f'''from transformers import pipeline

tag = pipeline("token-classification", model={source!r}, aggregation_strategy={aggregation!r})
for e in tag({text!r}):
    label = e.get("entity_group", e.get("entity"))
    print(f"{{label}}\\t{{e['word']}}\\t{{e['start']}}-{{e['end']}}\\t{{e['score']:.6f}}")
'''


_LOAD = '''import torch
from transformers import {cls}, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained({source!r})
model = {cls}.from_pretrained({source!r}{extra}).eval()
'''


def _paired(cls: str, source: str, first: tuple[str, str], second: tuple[str, list[str]], options: str) -> str:
    """Load the model; encode `first` paired with each of `second` (one batch) under torch's no-grad."""
    (a_name, a), (b_name, b) = first, second
    return _LOAD.format(cls=cls, source=source, extra="") + f'''
{a_name} = {a!r}
{b_name} = {b!r}
with torch.inference_mode():
    encoding = tokenizer([{a_name}] * len({b_name}), {b_name}, return_tensors="pt", padding=True{options})
'''


def _nsp(source: str, inputs: Any) -> str:
    a = str(_field(inputs, "sentence_a", ""))
    candidates = _lines(_field(inputs, "candidates", ()))
    truncate = (",\n                         truncation=\"longest_first\", "
                "max_length=model.config.max_position_embeddings")
    return _paired("AutoModelForNextSentencePrediction", source, ("a", a), ("candidates", candidates), truncate) + '''\
    probabilities = torch.softmax(model(**encoding).logits.float(), dim=-1)
for b, (is_next, not_next) in zip(candidates, probabilities.tolist()):  # label 0 = IsNext
    print(f"{is_next:.6f}\\t{not_next:.6f}\\t{b}")
'''


def _choice(source: str, inputs: Any) -> str:
    prompt = str(_field(inputs, "prompt", ""))
    choices = _lines(_field(inputs, "choices", ()))
    return _paired("AutoModelForMultipleChoice", source, ("prompt", prompt), ("choices", choices), "") + '''\
    logits = model(**{name: t.unsqueeze(0) for name, t in encoding.items()}).logits[0].float()
for choice, p, z in zip(choices, torch.softmax(logits, -1).tolist(), logits.tolist()):
    print(f"{p:.6f}\\t{z:.4f}\\t{choice}")
'''


def _qa(source: str, inputs: Any) -> str:
    question, context = str(_field(inputs, "question", "")), str(_field(inputs, "context", ""))
    longest = int(getattr(_field(inputs, "options"), "max_answer_len", 15))
    return _LOAD.format(cls="AutoModelForQuestionAnswering", source=source, extra="") + f'''
question = {question!r}
context = {context!r}
encoding = tokenizer(question, context, truncation="only_second", return_offsets_mapping=True,
                     return_tensors="pt")
offsets = encoding.pop("offset_mapping")[0].tolist()
in_context = torch.tensor([s == 1 for s in encoding.sequence_ids(0)])
with torch.inference_mode():
    out = model(**encoding)
start = out.start_logits[0].float().masked_fill(~in_context, float("-inf")).softmax(-1)
end = out.end_logits[0].float().masked_fill(~in_context, float("-inf")).softmax(-1)
spans = torch.triu(start[:, None] * end[None, :]).tril({longest - 1})  # start <= end, at most {longest} tokens
first, last = divmod(int(spans.argmax()), spans.shape[1])
print(f"{{float(spans.max()):.6f}}\\t{{context[offsets[first][0]:offsets[last][1]]}}")
'''


def _attention(source: str, inputs: Any) -> str:
    text, pair = str(_field(inputs, "text", "")), _field(inputs, "pair")
    arguments = f"{text!r}, {str(pair)!r}" if pair else repr(text)
    return _LOAD.format(cls="AutoModel", source=source, extra=', attn_implementation="eager"') + f'''
encoding = tokenizer({arguments}, return_tensors="pt")
with torch.inference_mode():
    attentions = model(**encoding, output_attentions=True).attentions  # per layer: (1, heads, q, k)
tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0])
for layer, a in enumerate(attentions):
    for head in range(a.shape[1]):
        row = a[0, head]
        q = int(row.max(dim=-1).values.argmax())
        k = int(row[q].argmax())
        print(f"layer {{layer}} head {{head}}: strongest {{tokens[q]}} -> {{tokens[k]}} {{float(row[q, k]):.4f}}")
'''


BUILDERS: dict[str, Callable[[str, Any], str]] = {
    "fill-mask": _fill_mask, "classification": _classification, "ner": _ner, "nsp": _nsp,
    "multiple-choice": _choice, "qa": _qa, "attention": _attention,
}


def can_copy(task: str) -> bool:
    return task in BUILDERS


def python_snippet(task: str, source: str, inputs: Any) -> str:
    """A runnable script for `task` on the model at `source` with `inputs` (a task input or a dict)."""
    if task not in BUILDERS:
        raise ValueError(f"no Python snippet for {task!r} (have: {', '.join(BUILDERS)})")
    header = f"# BERT Studio: {task} on {source}\n# pip install torch transformers\n"
    return header + BUILDERS[task](source, inputs)

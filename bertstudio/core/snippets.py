"""Copy as Python: a short transformers script that reproduces the numbers a tab shows.

Pipelines where the app uses one (fill-mask, NER, classification), the plain model and a
softmax where it does not (next sentence, multiple choice, QA, attention). Inputs are read
with getattr from the task's input dataclass (or a dict of the same fields, as a workspace
file holds them), so a snippet can be built from whatever a tab last ran. Each snippet prints
one line per score. Each task's spec names its builder here (`script=lazy("bertstudio.core.snippets:ner")`),
so no table in this module lists the tasks; `python_snippet(spec, ...)` adds the header.

Safety: a model source, a text or a path may come from a workspace file someone shared, so
every value we did not write ourselves enters the script through `literal` only, as a
separate statement (`TEXT = '...'`); never inside a comment or an f-string of the script.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError
from bertstudio.core.limits import check_count

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import TaskSpec

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
MAX_ANSWER_LEN = 100_000  # tokens; only a bound against absurd workspace values
HEADER = "# BERT Studio: {task}\n# pip install torch transformers\n"


def literal(value: Any) -> str:
    """`value` as a Python literal: the one way a value we did not write enters generated code.

    str's own repr escapes newlines (\\n, \\r, U+2028...), quotes, backslashes, NUL and lone
    surrogates, so the text cannot end the literal it sits in; the base types' reprs are called
    so that a subclass cannot substitute its own. A float must be finite (repr(nan) is a name)."""
    if value is None or isinstance(value, bool):
        return repr(None if value is None else bool(value))
    if isinstance(value, str):
        return str.__repr__(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"A number in the script must be finite (got {float.__repr__(value)}).")
        return float.__repr__(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no literal for a {type(value).__name__}")


def _script(template: str, **values: Any) -> str:
    """`template` (our code, with `{{` for a brace the script keeps) with each {name} slot
    filled by literal(value): str.format never re-reads what it substitutes."""
    return template.format(**{name: literal(value) for name, value in values.items()})


def _field(inputs: Any, name: str, default: Any = None) -> Any:
    for alias in _NAMES.get(name, (name,)):
        value = inputs.get(alias) if isinstance(inputs, dict) else getattr(inputs, alias, None)
        if value is not None:
            return value
    return default


def _text(inputs: Any, name: str) -> str:
    value = _field(inputs, name, "")
    return value if isinstance(value, str) else str(value)


def _lines(value: Any) -> list[str]:
    """A list of strings from a list, or from text with one item per line."""
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if not isinstance(value, (list, tuple)):
        value = [] if value is None else [value]
    return [item if isinstance(item, str) else str(item) for item in value]


def fill_mask(source: str, inputs: Any) -> str:
    from bertstudio.core.tasks.fill_mask import MAX_TOP_K

    top_k = check_count(_field(inputs, "top_k", 5), "Top k", 1, MAX_TOP_K)
    return _script('''from transformers import pipeline

MODEL = {model}
TEXT = {text}

fill = pipeline("fill-mask", model=MODEL)
found = fill(TEXT, top_k={top_k})
for number, candidates in enumerate(found if isinstance(found[0], list) else [found], 1):
    for c in candidates:  # one block per mask, best first
        print(f"mask {{number}}\\t{{c['token_str']}}\\t{{c['score']:.6f}}")
''', model=source, text=_text(inputs, "text"), top_k=top_k)


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


def _table_reader(path: str, column: Any) -> str:
    """Python that reads the rows the app read: lines of a .txt, a CSV/TSV column ('text' or the first)."""
    if path.lower().endswith(".txt") and not column:
        return _script("PATH = {path}\n"
                       "texts = [line.strip() for line in open(PATH, encoding='utf-8') if line.strip()]\n",
                       path=path)
    delimiter = "\t" if path.lower().endswith((".tsv", ".tab")) else ","
    reader = ("PATH = {path}\n"
              "rows = csv.DictReader(open(PATH, encoding='utf-8', newline=''), delimiter={delimiter})\n")
    if not column:
        return _script(reader + "texts = [row.get('text', next(iter(row.values()))) for row in rows]\n",
                       path=path, delimiter=delimiter)
    return _script(reader + "COLUMN = {column}\ntexts = [row[COLUMN] for row in rows]\n",
                   path=path, delimiter=delimiter, column=str(column))


def classification(source: str, inputs: Any) -> str:
    texts, pair, path = _field(inputs, "text", ""), _field(inputs, "pair"), _field(inputs, "path")
    head = _script(_CLASSIFIER, model=source)
    if path and not texts:  # a table the app read in its worker: the same rows, read with csv
        return "import csv\n" + head + _table_reader(str(path), _field(inputs, "column")) + _BATCH
    if isinstance(texts, (list, tuple)) and len(texts) != 1:
        return head + _script("texts = {texts}\n", texts=_lines(texts)) + _BATCH
    text = str(texts[0]) if isinstance(texts, (list, tuple)) else str(texts)
    if pair and str(pair).strip():
        return head + _script("TEXT = {{'text': {text}, 'text_pair': {pair}}}\n", text=text, pair=str(pair)) + _ONE
    return head + _script("TEXT = {text}\n", text=text) + _ONE


def ner(source: str, inputs: Any) -> str:
    from bertstudio.core.tasks.ner import DEFAULT_STRATEGY, STRATEGIES

    aggregation = _field(inputs, "aggregation", DEFAULT_STRATEGY)
    if aggregation not in STRATEGIES:
        raise InputError(f"Unknown aggregation strategy {str(aggregation)[:40]!r}.",
                         hint=f"Choose one of {', '.join(STRATEGIES)}.")
    return _script('''from transformers import pipeline

MODEL = {model}
TEXT = {text}

tag = pipeline("token-classification", model=MODEL, aggregation_strategy={aggregation})
for e in tag(TEXT):
    label = e.get("entity_group", e.get("entity"))
    print(f"{{label}}\\t{{e['word']}}\\t{{e['start']}}-{{e['end']}}\\t{{e['score']:.6f}}")
''', model=source, text=_text(inputs, "text"), aggregation=aggregation)


_LOAD = '''import torch
from transformers import {cls}, AutoTokenizer

MODEL = {{model}}
tokenizer = AutoTokenizer.from_pretrained(MODEL)
model = {cls}.from_pretrained(MODEL{extra}).eval()
'''


def _load(cls: str, source: str, extra: str = "") -> str:
    """The tokenizer and the model (`cls`, `extra` are ours); the source goes in as a literal."""
    return _script(_LOAD.format(cls=cls, extra=extra), model=source)


def _paired(cls: str, source: str, first: tuple[str, str], second: tuple[str, list[str]], options: str) -> str:
    """Load the model; encode `first` paired with each of `second` (one batch) under torch's no-grad.
    The names and `options` are ours; the texts go in as literals."""
    (a_name, a), (b_name, b) = first, second
    return _load(cls, source) + _script(f'''
{a_name} = {{a}}
{b_name} = {{b}}
with torch.inference_mode():
    encoding = tokenizer([{a_name}] * len({b_name}), {b_name}, return_tensors="pt", padding=True{options})
''', a=a, b=b)


def nsp(source: str, inputs: Any) -> str:
    truncate = (",\n                         truncation=\"longest_first\", "
                "max_length=model.config.max_position_embeddings")
    first = ("a", _text(inputs, "sentence_a"))
    second = ("candidates", _lines(_field(inputs, "candidates", ())))
    return _paired("AutoModelForNextSentencePrediction", source, first, second, truncate) + '''\
    probabilities = torch.softmax(model(**encoding).logits.float(), dim=-1)
for b, (is_next, not_next) in zip(candidates, probabilities.tolist()):  # label 0 = IsNext
    print(f"{is_next:.6f}\\t{not_next:.6f}\\t{b}")
'''


def multiple_choice(source: str, inputs: Any) -> str:
    first = ("prompt", _text(inputs, "prompt"))
    second = ("choices", _lines(_field(inputs, "choices", ())))
    return _paired("AutoModelForMultipleChoice", source, first, second, "") + '''\
    logits = model(**{name: t.unsqueeze(0) for name, t in encoding.items()}).logits[0].float()
for choice, p, z in zip(choices, torch.softmax(logits, -1).tolist(), logits.tolist()):
    print(f"{p:.6f}\\t{z:.4f}\\t{choice}")
'''


def _max_answer_len(inputs: Any) -> int:
    options = _field(inputs, "options")
    value = options.get("max_answer_len") if isinstance(options, dict) else getattr(options, "max_answer_len", None)
    return check_count(15 if value is None else value, "Maximum answer length", 1, MAX_ANSWER_LEN)


def qa(source: str, inputs: Any) -> str:
    return _load("AutoModelForQuestionAnswering", source) + _script('''
QUESTION = {question}
CONTEXT = {context}
MAX_ANSWER_LEN = {longest}  # tokens
encoding = tokenizer(QUESTION, CONTEXT, truncation="only_second", return_offsets_mapping=True,
                     return_tensors="pt")
offsets = encoding.pop("offset_mapping")[0].tolist()
in_context = torch.tensor([s == 1 for s in encoding.sequence_ids(0)])
allowed = in_context.clone()
allowed[0] = True  # the first token ([CLS], "no answer") shares the softmax, as in the app
with torch.inference_mode():
    out = model(**encoding)
start = out.start_logits[0].double().masked_fill(~allowed, float("-inf")).softmax(-1).masked_fill(~in_context, 0)
end = out.end_logits[0].double().masked_fill(~allowed, float("-inf")).softmax(-1).masked_fill(~in_context, 0)
spans = torch.triu(start[:, None] * end[None, :]).tril(MAX_ANSWER_LEN - 1)  # start <= end, not too long
first, last = divmod(int(spans.argmax()), spans.shape[1])
print(f"{{float(spans.max()):.6f}}\\t{{CONTEXT[offsets[first][0]:offsets[last][1]]}}")
''', question=_text(inputs, "question"), context=_text(inputs, "context"), longest=_max_answer_len(inputs))


_ATTENTION = '''with torch.inference_mode():
    attentions = model(**encoding, output_attentions=True).attentions  # per layer: (1, heads, q, k)
tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0])
for layer, a in enumerate(attentions):
    for head in range(a.shape[1]):
        row = a[0, head]
        q = int(row.max(dim=-1).values.argmax())
        k = int(row[q].argmax())
        print(f"layer {layer} head {head}: strongest {tokens[q]} -> {tokens[k]} {float(row[q, k]):.4f}")
'''
# Value-weighted norms (Kobayashi et al. 2020): ||alpha_ij f_h(x_j)||, f_h(x_j) = v_j^h W_O^h, from the
# value projection's outputs and the attention output projection's weight, captured by hooks in
# call order (ALBERT calls its one shared layer once per layer).
_NORM_HOOKS = '''# each architecture's value projection and attention output projection (W_O), by module name
VALUE, OUTPUT = {"distilbert": ("attention.v_lin", "attention.out_lin"),
                 "albert": ("attention.value", "attention.dense")}.get(
    model.config.model_type, ("attention.self.value", "attention.output.dense"))
values, weights = [], []
for name, module in model.named_modules():
    if name.endswith(VALUE):
        module.register_forward_hook(lambda module, args, out: values.append(out[0]))
    elif name.endswith(OUTPUT):
        module.register_forward_hook(lambda module, args, out: weights.append(module.weight.detach()))
'''
_NORMS = '''if len(values) != len(attentions) or len(weights) != len(attentions):
    raise SystemExit("No value projections found: value-weighted norms are read for BERT, RoBERTa, "
                     "DistilBERT, ALBERT and ELECTRA models.")
heads = model.config.num_attention_heads
for layer, (a, v, w) in enumerate(zip(attentions, values, weights)):
    d = v.shape[-1] // heads
    f = torch.einsum("thd,ohd->hto", v.view(-1, heads, d), w.view(w.shape[0], heads, d))  # f_h(x_j)
    norms = a[0] * f.norm(dim=-1)[:, None, :]  # heads x q x k: ||alpha_ij f_h(x_j)||
    for head in range(heads):
        row = norms[head]
        q = int(row.max(dim=-1).values.argmax())
        k = int(row[q].argmax())
        print(f"norms layer {layer} head {head}: largest {tokens[q]} -> {tokens[k]} {float(row[q, k]):.4f}")
'''


def attention(source: str, inputs: Any) -> str:
    """Every head's strongest weight; with `norms` (the CLI's --norms, the tab's weighting toggle)
    also every head's largest value-weighted norm, from the same forward pass."""
    text, pair = _text(inputs, "text"), _field(inputs, "pair")
    if pair:
        given = _script("TEXT = {text}\nPAIR = {pair}\nencoding = tokenizer(TEXT, PAIR, return_tensors=\"pt\")\n",
                        text=text, pair=str(pair))
    else:
        given = _script("TEXT = {text}\nencoding = tokenizer(TEXT, return_tensors=\"pt\")\n", text=text)
    norms = bool(_field(inputs, "norms", False))
    return (_load("AutoModel", source, ', attn_implementation="eager"') + "\n" + given
            + (_NORM_HOOKS if norms else "") + _ATTENTION + (_NORMS if norms else ""))


def python_snippet(spec: TaskSpec, source: str, inputs: Any) -> str:
    """A runnable script for `spec`'s task on the model at `source` with `inputs` (a task input or a dict).

    The spec names its builder (`script=lazy("bertstudio.core.snippets:ner")`), so no table here
    lists the tasks. The header names only the spec's key (ours, never user text); the source is
    the script's MODEL literal. Raises InputError for a value no script can hold (a top k of "abc",
    an unknown strategy) and ValueError for a spec that has no script."""
    if spec.script is None:
        raise ValueError(f"no Python snippet for {spec.key!r}")
    if not isinstance(source, str):
        source = str(source)
    return HEADER.format(task=spec.key) + spec.script(source, inputs)

"""Copy as Python: a short transformers script that reproduces the numbers a tab shows.

Pipelines where the app uses one (fill-mask, NER, classification), the plain model and a
softmax where it does not (next sentence, multiple choice, QA, attention). Inputs are read
with getattr from the task's input dataclass (or a dict of the same fields, as a workspace
file holds them), so a snippet can be built from whatever a tab last ran. Each snippet prints
one line per score. Each task's builder lives in its package (core/tasks/<task>/snippet.py, the
spec's `script`), so no table in this module lists the tasks; `python_snippet(spec, ...)` adds the
header, and the helpers here are what the builders share.

Safety: a model source, a text or a path may come from a workspace file someone shared, so
every value we did not write ourselves enters the script through `literal` only, as a
separate statement (`TEXT = '...'`); never inside a comment or an f-string of the script.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError

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


def script(template: str, **values: Any) -> str:
    """`template` (our code, with `{{` for a brace the script keeps) with each {name} slot
    filled by literal(value): str.format never re-reads what it substitutes."""
    return template.format(**{name: literal(value) for name, value in values.items()})


def field(inputs: Any, name: str, default: Any = None) -> Any:
    """An input field by any of its names, from a task input or a dict of its fields (a workspace)."""
    for alias in _NAMES.get(name, (name,)):
        value = inputs.get(alias) if isinstance(inputs, dict) else getattr(inputs, alias, None)
        if value is not None:
            return value
    return default


def text_field(inputs: Any, name: str) -> str:
    """A field as text ("" when absent)."""
    value = field(inputs, name, "")
    return value if isinstance(value, str) else str(value)


def lines(value: Any) -> list[str]:
    """A list of strings from a list, or from text with one item per line."""
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if not isinstance(value, (list, tuple)):
        value = [] if value is None else [value]
    return [item if isinstance(item, str) else str(item) for item in value]


_LOAD = '''import torch
from transformers import {cls}, AutoTokenizer

MODEL = {{model}}
tokenizer = AutoTokenizer.from_pretrained(MODEL)
model = {cls}.from_pretrained(MODEL{extra}).eval()
'''


def load(cls: str, source: str, extra: str = "") -> str:
    """The tokenizer and the model (`cls`, `extra` are ours); the source goes in as a literal."""
    return script(_LOAD.format(cls=cls, extra=extra), model=source)


def paired(cls: str, source: str, first: tuple[str, str], second: tuple[str, list[str]], options: str) -> str:
    """Load the model; encode `first` paired with each of `second` (one batch) under torch's no-grad.
    The names and `options` are ours; the texts go in as literals."""
    (a_name, a), (b_name, b) = first, second
    return load(cls, source) + script(f'''
{a_name} = {{a}}
{b_name} = {{b}}
with torch.inference_mode():
    encoding = tokenizer([{a_name}] * len({b_name}), {b_name}, return_tensors="pt", padding=True{options})
''', a=a, b=b)


def python_snippet(spec: TaskSpec, source: str, inputs: Any) -> str:
    """A runnable script for `spec`'s task on the model at `source` with `inputs` (a task input or a dict).

    The spec names its builder (core/tasks/<task>/snippet.py), so no table here lists the tasks.
    The header names only the spec's key (ours, never user text); the source is the script's
    MODEL literal. Raises InputError for a value no script can hold (a top k of "abc",
    an unknown strategy) and ValueError for a spec that has no script."""
    if spec.script is None:
        raise ValueError(f"no Python snippet for {spec.key!r}")
    if not isinstance(source, str):
        source = str(source)
    return HEADER.format(task=spec.key) + spec.script(source, inputs)

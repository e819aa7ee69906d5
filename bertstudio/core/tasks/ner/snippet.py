"""NER's Copy as Python: the token-classification pipeline with the tab's aggregation strategy."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.snippets import field, script, text_field
from bertstudio.core.tasks.ner import DEFAULT_STRATEGY, STRATEGIES


def build(source: str, inputs: Any) -> str:
    aggregation = field(inputs, "aggregation", DEFAULT_STRATEGY)
    if aggregation not in STRATEGIES:
        raise InputError(f"Unknown aggregation strategy {str(aggregation)[:40]!r}.",
                         hint=f"Choose one of {', '.join(STRATEGIES)}.")
    return script('''from transformers import pipeline

MODEL = {model}
TEXT = {text}

tag = pipeline("token-classification", model=MODEL, aggregation_strategy={aggregation})
for e in tag(TEXT):
    label = e.get("entity_group", e.get("entity"))
    print(f"{{label}}\\t{{e['word']}}\\t{{e['start']}}-{{e['end']}}\\t{{e['score']:.6f}}")
''', model=source, text=text_field(inputs, "text"), aggregation=aggregation)

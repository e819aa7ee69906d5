"""Fill-mask's Copy as Python: the fill-mask pipeline's candidates per mask, best first."""

from __future__ import annotations

from typing import Any

from bertstudio.core.limits import check_count
from bertstudio.core.snippets import field, script, text_field
from bertstudio.core.tasks.fill_mask import MAX_TOP_K


def build(source: str, inputs: Any) -> str:
    top_k = check_count(field(inputs, "top_k", 5), "Top k", 1, MAX_TOP_K)
    return script('''from transformers import pipeline

MODEL = {model}
TEXT = {text}

fill = pipeline("fill-mask", model=MODEL)
found = fill(TEXT, top_k={top_k})
for number, candidates in enumerate(found if isinstance(found[0], list) else [found], 1):
    for c in candidates:  # one block per mask, best first
        print(f"mask {{number}}\\t{{c['token_str']}}\\t{{c['score']:.6f}}")
''', model=source, text=text_field(inputs, "text"), top_k=top_k)

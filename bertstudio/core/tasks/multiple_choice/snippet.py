"""Multiple choice's Copy as Python: the prompt paired with each ending, a softmax over the endings."""

from __future__ import annotations

from typing import Any

from bertstudio.core.snippets import field, lines, paired, text_field


def build(source: str, inputs: Any) -> str:
    first = ("prompt", text_field(inputs, "prompt"))
    second = ("choices", lines(field(inputs, "choices", ())))
    return paired("AutoModelForMultipleChoice", source, first, second, "") + '''\
    logits = model(**{name: t.unsqueeze(0) for name, t in encoding.items()}).logits[0].float()
for choice, p, z in zip(choices, torch.softmax(logits, -1).tolist(), logits.tolist()):
    print(f"{p:.6f}\\t{z:.4f}\\t{choice}")
'''

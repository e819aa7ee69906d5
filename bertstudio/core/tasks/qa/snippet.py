"""Question answering's Copy as Python: the best span as the app finds it (start x end
probabilities over the context, the first token sharing the softmax, a longest answer)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.limits import check_count
from bertstudio.core.snippets import field, load, script, text_field

MAX_ANSWER_LEN = 100_000  # tokens; only a bound against absurd workspace values


def max_answer_len(inputs: Any) -> int:
    options = field(inputs, "options")
    value = options.get("max_answer_len") if isinstance(options, dict) else getattr(options, "max_answer_len", None)
    return check_count(15 if value is None else value, "Maximum answer length", 1, MAX_ANSWER_LEN)


def build(source: str, inputs: Any) -> str:
    return load("AutoModelForQuestionAnswering", source) + script('''
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
''', question=text_field(inputs, "question"), context=text_field(inputs, "context"), longest=max_answer_len(inputs))

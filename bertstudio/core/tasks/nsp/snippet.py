"""Next sentence's Copy as Python: the NSP head's softmax for sentence A with each candidate B."""

from __future__ import annotations

from typing import Any

from bertstudio.core.snippets import field, lines, paired, text_field


def build(source: str, inputs: Any) -> str:
    truncate = (",\n                         truncation=\"longest_first\", "
                "max_length=model.config.max_position_embeddings")
    first = ("a", text_field(inputs, "sentence_a"))
    second = ("candidates", lines(field(inputs, "candidates", ())))
    return paired("AutoModelForNextSentencePrediction", source, first, second, truncate) + '''\
    probabilities = torch.softmax(model(**encoding).logits.float(), dim=-1)
for b, (is_next, not_next) in zip(candidates, probabilities.tolist()):  # label 0 = IsNext
    print(f"{is_next:.6f}\\t{not_next:.6f}\\t{b}")
'''

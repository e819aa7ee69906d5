"""QA latency: bertstudio's answer() versus the bare model forward on the same windows.

Raw = the same tokenizer call (overlapping windows, offsets) + one AutoModelForQuestionAnswering
forward, what any QA code must do; ours adds the span decoding, the merge of windows and the
per-token scores. The head of all-MiniLM-L6-v2 is random: latency does not care.
"""

from __future__ import annotations

from typing import Any

from common import MODELS, Row, bert_base, interleaved, sizes, threads

QUESTION = "Where was Ingrid born?"
SHORT = ("Ingrid was born in Lisbon in 1961. Her brother Rafael was born in Warsaw three years later, "
         "and both moved to Nairobi as students. ") * 6
LONG = "The weather was mild and the market was busy all week. " * 60 + SHORT


def rows() -> list[Row]:
    import torch

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.qa import QAOptions, answer

    torch.set_num_threads(threads())
    models = [("", MODELS / "all-minilm-l6-v2")] if "small" in sizes() else []
    models += [("bert-base-sized ", bert_base("QuestionAnswering"))] if "base" in sizes() else []
    out: list[Row] = []
    for size, folder in models:
        loaded = load_model(LoadRequest(str(folder), "qa"))
        out += _rows(size, loaded, answer, QAOptions(top_k=5))
    return out


def _rows(size: str, loaded: Any, answer: Any, options: Any) -> list[Row]:
    import torch

    tokenizer, model = loaded.tokenizer, loaded.model
    out: list[Row] = []
    for name, context in (("short", SHORT), ("long", LONG)):

        def raw(context: str = context) -> object:
            encoded = tokenizer(QUESTION, context, truncation="only_second", max_length=384, stride=128,
                                return_overflowing_tokens=True, return_offsets_mapping=True, padding="longest",
                                return_tensors="pt")
            inputs = {k: encoded[k] for k in tokenizer.model_input_names if k in encoded}
            with torch.inference_mode():
                return model(**inputs)

        def ours(context: str = context) -> object:
            return answer(loaded, QUESTION, context, options)

        windows = len(ours().windows)
        ours_s, raw_s = interleaved(ours, raw, repeats=15)
        out.append(Row(f"{size}qa {name} ({len(context)} chars, {windows} window{'s' * (windows > 1)})", ours_s, raw_s,
                       "answer() vs tokenizer + bare AutoModelForQuestionAnswering forward"))
    return out

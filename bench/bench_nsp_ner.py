"""NER vs raw TokenClassificationPipeline, NSP vs the bare model forward: same model, same input.

Models: the trained MiniLM heads of tests/fixtures/trained_nsp_ner.py (trained on first use,
cached). Our NER call also builds the wordpiece view and every strategy's entities from its
one forward pass; the raw side is one pipeline call with aggregation "simple".
"""

from __future__ import annotations

import sys
from pathlib import Path

from common import MODELS, Row, bert_base, interleaved, sizes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NER_TEXT = "My name is Klaus and I live in Vienna, and Olivia Fernandes travelled from Lisbon to Prague."
NSP_A = "The baker mixed flour, water and yeast in a bowl."
NSP_B = "He kneaded the dough and let it rise for an hour."


def rows() -> list[Row]:
    out = []
    if "small" in sizes():
        from tests.fixtures.trained_nsp_ner import trained_ner, trained_nsp

        encoder = MODELS / "all-minilm-l6-v2"
        out += _rows("", trained_ner(encoder), trained_nsp(encoder))
    if "base" in sizes():
        out += _rows("bert-base-sized ", bert_base("TokenClassification"), bert_base("NextSentencePrediction"))
    return out


def _rows(size: str, ner_folder: Path, nsp_folder: Path) -> list[Row]:
    import torch
    from transformers import AutoTokenizer, BertForNextSentencePrediction, pipeline

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.ner import tag
    from bertstudio.core.tasks.nsp import predict

    out = []
    loaded = load_model(LoadRequest(str(ner_folder), "ner"))
    raw_pipe = pipeline("token-classification", model=loaded.model, tokenizer=loaded.tokenizer)
    ours, raw = interleaved(lambda: tag(loaded, NER_TEXT, "simple", views=False),
                            lambda: raw_pipe(NER_TEXT, aggregation_strategy="simple"))
    out.append(Row(f"{size}ner: tag (simple) vs TokenClassificationPipeline", ours, raw, "CLI path: entities only"))
    ours, raw = interleaved(lambda: tag(loaded, NER_TEXT, "simple"),
                            lambda: raw_pipe(NER_TEXT, aggregation_strategy="simple"))
    out.append(Row(f"{size}ner: tab path (+ wordpieces, all 5 strategies)", ours, raw,
                   "one forward, 6 postprocesses"))

    loaded = load_model(LoadRequest(str(nsp_folder), "nsp"))
    tokenizer = AutoTokenizer.from_pretrained(nsp_folder)
    model = BertForNextSentencePrediction.from_pretrained(nsp_folder).eval()

    def bare() -> object:
        with torch.inference_mode():
            logits = model(**tokenizer(NSP_A, NSP_B, return_tensors="pt")).logits
            return torch.softmax(logits, -1)

    ours, raw = interleaved(lambda: predict(loaded, NSP_A, NSP_B), bare)
    out.append(Row(f"{size}nsp: one pair vs bare model forward", ours, raw))
    return out

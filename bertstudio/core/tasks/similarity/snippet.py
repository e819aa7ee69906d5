"""Similarity's Copy as Python: the cosines of sentence A with each B, as the tab shows them."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.similarity import SimilarityInput, pooling_of, sentences_from_lines


def build(source: str, inputs: Any) -> str:
    """Copy as Python: the same embeddings and cosines with plain transformers. Every value we did not
    write (model, sentences, pooling) enters through `literal`, one statement each."""
    from bertstudio.core.snippets import literal

    given = as_input(inputs)  # not refused when empty (as the other scripts): the script is the user's to edit
    a, bs, pooling = given.a, [b.strip() for b in given.bs if b.strip()], pooling_of(given.pooling)
    pooled = ("hidden[:, 0]" if pooling == "cls" else
              "(hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # mean over the attention mask")
    return (
        "import torch\nfrom transformers import AutoModel, AutoTokenizer\n\n"
        f"MODEL = {literal(source)}\nA = {literal(a)}\nBS = {literal(bs)}\nPOOLING = {literal(pooling)}\n\n"
        "tokenizer = AutoTokenizer.from_pretrained(MODEL)\n"
        "model = AutoModel.from_pretrained(MODEL).eval()\n"
        "with torch.inference_mode():\n"
        "    encoding = tokenizer([A, *BS], return_tensors=\"pt\", padding=True, truncation=True)\n"
        "    hidden = model(**encoding).last_hidden_state.float()\n"
        "    mask = encoding[\"attention_mask\"].unsqueeze(-1).float()\n"
        f"    embeddings = {pooled}\n"
        "unit = torch.nn.functional.normalize(embeddings, dim=-1)\n"
        "for b, score in zip(BS, (unit[1:] @ unit[0]).tolist()):\n"
        "    print(f\"{score:.6f}\\t{b}\")\n"
    )


def as_input(inputs: Any) -> SimilarityInput:
    """A SimilarityInput from itself or from a dict of its fields (a workspace's saved view)."""
    if isinstance(inputs, SimilarityInput):
        return inputs
    if isinstance(inputs, dict):
        bs = inputs.get("bs", ())
        bs = sentences_from_lines(bs) if isinstance(bs, str) else tuple(str(b) for b in bs or ())
        return SimilarityInput(str(inputs.get("a", "")), bs, str(inputs.get("pooling", "mean")))
    raise InputError("These inputs are not a similarity task's.")



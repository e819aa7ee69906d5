"""Trace why (activation patching): batched patched runs vs the same runs one by one; attribution
patching on a long input, with its rank agreement to exact patching.

1. The full states heatmap of a 64-token input on the trained MiniLM sentiment head
   (tests/fixtures/trained_sentiment.py): 7 hidden states x 64 positions = 448 patched runs, batched
   (core.patching.trace.states_heatmap) against the same runs one forward each (target: >= 3x).
2. Attribution patching on a 512-token input of a BERT-base-sized model (12 layers, 768 wide, 12
   heads; random weights built here, offline): seconds for every cell, and Spearman's rho with exact
   patching on a 32-cell sample; on the trained MiniLM (64 tokens) rho over every cell.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from common import MODELS, Row, clock, interleaved, threads

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SENTENCE = "Honestly, the long train ride was a delight from start to finish and I would do it again. "


def _text(tokenizer, tokens: int, start: str = "") -> str:  # noqa: ANN001
    ids = tokenizer(start + SENTENCE * 60, add_special_tokens=False)["input_ids"][: tokens - 2]
    return str(tokenizer.decode(ids))


def _bert_base(folder: Path) -> Path:
    """A BERT-base-sized classifier with random weights and MiniLM's (BERT's) tokenizer."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.BertConfig(num_labels=2)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    transformers.AutoTokenizer.from_pretrained(MODELS / "all-minilm-l6-v2").save_pretrained(folder)
    return folder


def rows() -> list[Row]:
    import torch

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.patching.attribution import spearman
    from bertstudio.core.patching.trace import Noise, set_up, states_heatmap, trace
    from bertstudio.core.progress import TaskControl
    from tests.fixtures.trained_sentiment import trained_sentiment

    torch.set_num_threads(threads())
    out = []
    loaded = load_model(LoadRequest(str(trained_sentiment(MODELS / "all-minilm-l6-v2")), "classification"))
    clean = _text(loaded.tokenizer, 64)
    corrupted = clean.replace("delight", "nightmare", 1)
    setup = set_up(loaded, "classification", (clean,), (corrupted,), None, None)
    assert len(setup.columns) == 64 and setup.same_length, (len(setup.columns), setup.same_length)
    control = TaskControl()
    batched, one_by_one = interleaved(lambda: states_heatmap(loaded, setup, control),
                                      lambda: states_heatmap(loaded, setup, control, batched=False), repeats=3)
    out.append(Row("patch: states heatmap 7 x 64 batched vs one by one", batched, one_by_one,
                   f"MiniLM-L6 sentiment, CPU; {one_by_one / batched:.1f}x faster batched"))

    exact = trace(loaded, "classification", (clean,), (corrupted,))
    estimate = trace(loaded, "classification", (clean,), (corrupted,), method="attribution", sample=32)
    assert exact.states is not None and estimate.states is not None
    pairs = [(e, x) for er, xr in zip(estimate.states, exact.states, strict=True) for e, x in zip(er, xr, strict=True)
             if e is not None and x is not None]
    rho = spearman([e for e, _ in pairs], [x for _, x in pairs])
    out.append(Row("patch: attribution vs exact, every state cell (rho)", 0.0, None,
                   f"MiniLM-L6 sentiment, 64 tokens: Spearman {rho:+.3f} over {len(pairs)} cells; "
                   f"heads rho {spearman(sum(estimate.heads, ()), sum(exact.heads, ())):+.3f}"))

    with tempfile.TemporaryDirectory() as folder:
        big = load_model(LoadRequest(str(_bert_base(Path(folder))), "classification"))
        text = _text(big.tokenizer, 512)
        noise = Noise((5, 6, 7), seed=0)
        start = clock()
        trace(big, "classification", (text,), noise=noise, method="attribution", sample=0)
        seconds = clock() - start
        start = clock()
        checked = trace(big, "classification", (text,), noise=noise, method="attribution", sample=32)
        checking = clock() - start - seconds
    out.append(Row("patch: attribution patching, 512 tokens, BERT-base size", seconds, None,
                   f"random weights, CPU; {13 * 512} state + 144 head cells; rho with exact on "
                   f"{checked.agreement_cells} cells {checked.agreement or float('nan'):+.3f} "
                   f"(those 32 exact runs: {checking:.1f} s)"))
    return out


if __name__ == "__main__":
    for row in rows():
        print(row)

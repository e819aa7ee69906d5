"""Counterfactuals on the trained MiniLM sentiment head (tests/fixtures/trained_sentiment.py): an antonym
or negation flip within 2 edits for most held-out sentences, each confirmed by `bertstudio classify`."""

from __future__ import annotations

import json

import pytest

from bertstudio.cli import main
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import spec_for_command
from bertstudio.core.whatif.search import find, options
from tests.fixtures.trained_sentiment import HELD_OUT, trained_sentiment


@pytest.fixture(scope="module")
def sentiment(real_models):  # noqa: ANN001, ANN201
    return trained_sentiment(real_models["all-minilm-l6-v2"])


def test_hotflip_flips_most_held_out_sentences_at_their_sentiment_words(sentiment, capsys) -> None:  # noqa: ANN001
    spec = spec_for_command("classify")
    loaded = load_model(LoadRequest(str(sentiment), spec.key))
    flipped = 0
    for text, label, carriers in HELD_OUT:
        result = find(loaded, spec, spec.explain.inputs_of((text,)), options("hotflip", 2, 1, per_word=5, beam=3),
                      TaskControl())
        assert result.original.label == label
        if not result.counterfactuals:
            continue
        found = result.counterfactuals[0]
        assert len(found.edits) <= 2 and found.prediction.label != label
        assert {e.word.text.lower() for e in found.edits} & carriers, (text, found.texts)  # the sentiment word
        assert main(["classify", "--model", str(sentiment), found.texts[0], "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["label"] == found.prediction.label
        flipped += 1
    assert flipped >= 3, f"{flipped} of {len(HELD_OUT)} flipped"


def test_mlm_with_a_minilm_vocabulary_masked_lm(sentiment, tmp_path) -> None:  # noqa: ANN001
    """No English masked LM is on this machine: a tiny random BERT MLM with MiniLM's tokenizer proposes
    (random) words; the search runs through --mlm's checks and returns only verified flips."""
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(sentiment)
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=37, max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.BertForMaskedLM(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    spec = spec_for_command("classify")
    loaded = load_model(LoadRequest(str(sentiment), spec.key))
    text = HELD_OUT[0][0]
    result = find(loaded, spec, spec.explain.inputs_of((text,)), options("mlm", 1, 3, per_word=8, mlm=str(tmp_path)),
                  TaskControl())
    assert result.evaluated > 0
    for found in result.counterfactuals:
        again = spec.run(loaded, spec.explain.inputs_of(found.texts), TaskControl())
        assert again.first.top.label == found.prediction.label != result.original.label

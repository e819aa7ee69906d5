"""Issue 40: one parameter count, unique tensors (the model bar said 0.8 M for a folder in one session
and 0.7 M after a restart: a tie to the word embeddings broken in memory counted its weights twice)."""

from __future__ import annotations

import pytest
import torch

from bertstudio.core.models import LoadRequest, in_memory, load_uncached
from bertstudio.core.parameters import count_parameters


@pytest.fixture
def masked_lm(checkpoint_factory):  # noqa: ANN001, ANN201
    """A private copy: quantize_int8 works in place, and the shared cache's model is every later test's."""
    return load_uncached(LoadRequest(str(checkpoint_factory("bert", "MaskedLM")), "fill-mask"))


def test_an_untied_copy_of_tied_embeddings_counts_once(masked_lm) -> None:  # noqa: ANN001
    tied = masked_lm.info.parameters
    model = masked_lm.model
    embeddings = model.get_input_embeddings().weight
    assert model.get_output_embeddings().weight is embeddings and count_parameters(model) == tied
    copy = type(model)(model.config)
    copy.load_state_dict(model.state_dict())
    copy.get_output_embeddings().weight = torch.nn.Parameter(embeddings.detach().clone())  # a merged head's copy
    assert sum(p.numel() for p in copy.parameters()) == tied + embeddings.numel()  # what the bar said
    assert count_parameters(copy) == tied
    assert in_memory(copy, masked_lm.tokenizer, "copy", "fill-mask").info.parameters == tied


def test_an_int8_model_counts_the_weights_it_packed(masked_lm) -> None:  # noqa: ANN001
    from bertstudio.core.quantize import quantize_int8

    tied = count_parameters(masked_lm.model)
    quantized, _done = quantize_int8(masked_lm.model)
    assert sum(p.numel() for p in quantized.parameters()) < tied
    assert count_parameters(quantized) == tied

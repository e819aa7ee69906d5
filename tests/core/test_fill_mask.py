"""Fill-mask equals transformers' FillMaskPipeline on every architecture; bad input is explained."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.fill_mask import predict

ARCHS = ["bert", "distilbert", "roberta", "albert", "electra"]


def _reference(folder, text, top_k):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    return tokenizer, pipeline("fill-mask", model=model, tokenizer=tokenizer)(text, top_k=top_k)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("masks", [1, 2])
def test_equals_pipeline(checkpoint_factory, arch: str, masks: int) -> None:
    folder = checkpoint_factory(arch)
    loaded = load_model(LoadRequest(str(folder), "fill-mask"))
    mask = loaded.tokenizer.mask_token  # never a hard-coded [MASK]
    text = f"the cat {mask} on the mat" + (f" and the dog {mask} ." if masks == 2 else "")
    _, expected = _reference(folder, text, 7)
    expected = [expected] if masks == 1 else expected
    result = predict(loaded, text, top_k=7)
    assert len(result.masks) == masks
    for ours, theirs in zip(result.masks, expected, strict=True):
        assert [c.token_id for c in ours.candidates] == [t["token"] for t in theirs]
        assert [c.token for c in ours.candidates] == [t["token_str"] for t in theirs]
        assert [c.score for c in ours.candidates] == pytest.approx([t["score"] for t in theirs], abs=1e-6)
        assert text[ours.start:ours.end] == mask
    assert mask not in result.filled_text


def test_real_albert_fills_oxygen(real_models) -> None:
    loaded = load_model(LoadRequest(str(real_models["rxnmapper-albert-smiles-mlm"]), "fill-mask"))
    result = predict(loaded, "C C ( = [MASK] ) O", top_k=5)
    assert result.masks[0].candidates[0].token == "O"
    assert result.masks[0].candidates[0].score > 0.9
    assert result.filled_text == "C C ( = O ) O"
    assert loaded.info.head_report.complete and not loaded.info.head_warning


def test_real_minilm_has_no_mlm_head(real_models) -> None:
    loaded = load_model(LoadRequest(str(real_models["all-minilm-l6-v2"]), "fill-mask"))
    assert not loaded.info.head_report.complete
    assert "cls.predictions.transform.dense.weight" in loaded.info.head_report.missing
    assert "meaningless" in loaded.info.head_warning
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.fill_mask import FillMaskInput
    from bertstudio.core.tasks.fill_mask.spec import SPEC

    outcome = run_spec(SPEC, loaded.info.request, FillMaskInput("The capital of France is [MASK]."), TaskControl())
    assert any(note.level == "warning" and "meaningless" in note.text for note in outcome.notes)


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_text(checkpoint_factory, text: str) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert")), "fill-mask"))
    with pytest.raises(InputError, match="empty"):
        predict(loaded, text)


def test_no_mask_names_the_models_mask_token(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("roberta")), "fill-mask"))
    with pytest.raises(InputError, match="<mask>"):
        predict(loaded, "the cat sat on the mat")


def test_long_text_is_truncated_with_a_warning(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert")), "fill-mask"))
    text = "the [MASK] sat on the mat . " + "the dog ran fast . " * 400
    result = predict(loaded, text)
    assert result.truncation is not None
    assert result.truncation.limit == loaded.info.max_length == 64
    assert "cut" in result.truncation.message and result.truncation.cut_at < len(text)
    assert len(result.masks) == 1


def test_mask_past_the_limit_is_an_error(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert")), "fill-mask"))
    with pytest.raises(InputError, match="cut off"):
        predict(loaded, "the dog ran fast . " * 100 + "the [MASK] sat .")


def test_top_k_bounds(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert")), "fill-mask"))
    with pytest.raises(InputError):
        predict(loaded, "the [MASK] sat", top_k=0)


def test_model_without_mlm_class(checkpoint_factory) -> None:
    # A DistilBERT checkpoint loads for fill-mask; asking NSP of it must be refused clearly.
    with pytest.raises(MissingHeadError, match="no DistilBertForNextSentencePrediction class"):
        load_model(LoadRequest(str(checkpoint_factory("distilbert")), "nsp"))


def test_cli_compare_json(checkpoint_factory, capsys) -> None:
    import json

    from bertstudio.cli import main

    a, b = checkpoint_factory("bert"), checkpoint_factory("electra")
    assert main(["fill-mask", "--model", str(a), "the cat [MASK] on the mat", "--compare", str(b), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == str(a) and out["compare"]["model"] == str(b)
    assert len(out["result"]) == len(out["compare"]["result"]) == 1
    diff = out["compare"]["differences"][0]
    assert diff["top_a"] == out["result"][0][0]["token"] and diff["top_b"] == out["compare"]["result"][0][0]["token"]

"""Dynamic int8 quantization as a model variant: close to float32, refused on a GPU, part of the
cache key, its size and note shown, `--quantize`/`--compare-quantize` on the CLI and in evaluate.

Tolerances: on tiny random checkpoints (hidden 32) every int8 logit is within 0.05 of float32;
on the trained MiniLM sentiment head top-1 agreement over the 300 demo reviews is >= 99 % (99.7 %
measured, in batches of like length), probabilities move 0.0035 on average, and at most 3 % of the
reviews by more than 0.2 (those near the boundary: 1 and 4 of 300 measured on two retrained
fixtures, so no single worst case is asserted). Activations are quantized per batch, so padding counts.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bertstudio.cli import main
from bertstudio.core.errors import DeviceError, InputError
from bertstudio.core.models import LoadRequest, load_uncached
from bertstudio.core.quantize import check_quantize, split_variant, variant_source
from bertstudio.core.tasks.spec import all_specs

TASK = next(s.key for s in all_specs().values() if s.model_class == "AutoModelForSequenceClassification")
CLI = next(s.cli_name for s in all_specs().values() if s.model_class == "AutoModelForSequenceClassification")
TEMPLATES = Path(__file__).resolve().parents[1] / "data" / "sentiment"  # what the sentiment fixture trained on


def _logits(loaded, texts: list[str]):  # noqa: ANN001, ANN202
    import torch

    encoded = loaded.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        logits = loaded.model(**encoded).logits
    return logits.softmax(-1), logits


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_int8_logits_close_to_float32(checkpoint_factory, arch: str) -> None:  # noqa: ANN001
    import torch

    folder = str(checkpoint_factory(arch, "SequenceClassification"))
    float32 = load_uncached(LoadRequest(folder, TASK))
    int8 = load_uncached(LoadRequest(folder, TASK, quantize="int8"))
    linear = torch.ao.nn.quantized.dynamic.Linear
    assert any(isinstance(m, linear) for m in int8.model.modules())
    assert not any(isinstance(m, torch.nn.Linear) and not isinstance(m, linear) for m in int8.model.modules())
    texts = ["the cat sat on the mat", "my dog ran fast in the house", "paris is the capital of france"]
    (_, a), (_, b) = _logits(float32, texts), _logits(int8, texts)
    assert float((a - b).abs().max()) < 0.05
    assert int8.info.size_mb < float32.info.size_mb and "int8" in int8.info.quantized


def test_trained_sentiment_head_keeps_its_top1(real_models) -> None:  # noqa: ANN001
    from tests.fixtures.trained_sentiment import trained_sentiment

    folder = str(trained_sentiment(real_models["all-minilm-l6-v2"]))
    texts = [row["text"] for name in ("template_reviews_train.csv", "template_reviews_eval.csv")  # its own data
             for row in csv.DictReader((TEMPLATES / name).open(encoding="utf-8"))]
    float32 = load_uncached(LoadRequest(folder, TASK))
    int8 = load_uncached(LoadRequest(folder, TASK, quantize="int8"))
    texts.sort(key=lambda text: len(float32.tokenizer(text)["input_ids"]))  # batches of like lengths: little padding
    same, moved, total = 0, 0, 0.0
    for start in range(0, len(texts), 32):
        (pa, _), (pb, _) = _logits(float32, texts[start:start + 32]), _logits(int8, texts[start:start + 32])
        same += int((pa.argmax(-1) == pb.argmax(-1)).sum())
        shift = (pa - pb).abs().max(-1).values
        moved, total = moved + int((shift > 0.2).sum()), total + float((pa - pb).abs().sum()) / 2
    assert same / len(texts) >= 0.99 and moved / len(texts) <= 0.03 and total / len(texts) < 0.01
    assert int8.info.size_mb < 0.7 * float32.info.size_mb  # 91 MB -> 59 MB: the embeddings stay float32


def test_int8_is_cpu_only_and_named_choices() -> None:
    with pytest.raises(DeviceError, match="CPU only"):
        check_quantize("int8", "cuda:0")
    with pytest.raises(InputError, match="Unknown quantization"):
        check_quantize("int4", "cpu")
    check_quantize(None, "cuda:0")
    check_quantize("int8", "cpu")
    from bertstudio.core.explain.jobs import explain_job

    with pytest.raises(InputError, match="do not flow through int8"):  # refused before any model loads
        explain_job(LoadRequest("never-loaded", TASK, quantize="int8"), TASK, ("x",), "ig", None, 8, False, None)


def test_variant_notation(tmp_path: Path) -> None:
    assert variant_source("m", "int8") == "m [int8]" and variant_source("m", None) == "m"
    assert split_variant("org/model [int8]") == ("org/model", "int8") and split_variant("m") == ("m", None)
    real = tmp_path / "odd [int8]"
    real.mkdir()
    assert split_variant(str(real)) == (str(real), None)  # a folder that has that name stays a folder


def test_quantize_is_part_of_the_cache_key(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.models import ModelCache

    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    cache = ModelCache()
    plain, int8 = cache.get(LoadRequest(folder, TASK)), cache.get(LoadRequest(folder, TASK, quantize="int8"))
    assert plain is not int8 and not plain.info.quantized and int8.info.request.quantize == "int8"


def _toy_csv(path: Path) -> Path:
    rows = ["text,label"] + [f"the {noun} is {word},{label}" for noun in ("cat", "dog", "car", "book")
                             for word, label in (("good", "positive"), ("bad", "negative"))]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_cli_quantize_and_compare_quantize(checkpoint_factory, capsys) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    assert main([CLI, "--model", model, "--quantize", "int8", "the cat sat", "--json"]) == 0
    captured = capsys.readouterr()
    assert "int8 dynamic quantization" in captured.err
    json.loads(captured.out)
    assert main([CLI, "--model", model, "--compare", model, "--compare-quantize", "int8", "the cat", "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["model"] == model and compared["compare"]["model"] == f"{model} [int8]"
    assert any("B (int8)" in note["text"] and "MB" in note["text"] and "ms" in note["text"]
               for note in compared["notes"])
    assert main([CLI, "--model", model, "--compare-quantize", "int8", "the cat"]) == 1
    assert "give --compare too" in capsys.readouterr().err


def test_evaluate_compare_quantize_json(checkpoint_factory, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    data = str(_toy_csv(tmp_path / "toy.csv"))
    assert main(["evaluate", "--task", CLI, "--model", model, "--data", data, "--compare", model,
                 "--compare-quantize", "int8", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    a, b = result, result["compare"]
    assert a["quantize"] is None and b["quantize"] == "int8" and b["model"] == f"{model} [int8]"
    assert 0 < b["size_mb"] < a["size_mb"] and a["ms_per_row"] > 0 and b["ms_per_row"] > 0
    disagreeing = len(b["disagreements"])
    assert b["agreement"] == pytest.approx(1 - disagreeing / a["n"])

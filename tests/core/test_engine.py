"""The batch engine (core/engine.py): predictions equal transformers' per-row pipeline to 1e-5 in
float32, in input order, whatever the batching; pairs; cut rows noted; Cancel and progress per batch."""

from __future__ import annotations

import numpy as np
import pytest

from bertstudio.core import engine
from bertstudio.core.errors import TaskCancelled
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import ProgressEvent, TaskControl

ARCHS = ["bert", "distilbert", "roberta", "albert", "electra"]
WORDS = "the cat sat on a mat and the dog ran fast in the big old house by a river".split()


def _texts(count: int, longest: int = 24) -> list[str]:
    """Rows of many lengths, in no order (1 to `longest` words), deterministic."""
    rng = np.random.default_rng(7)
    return [" ".join(rng.choice(WORDS, size=int(n))) for n in rng.integers(1, longest, size=count)]


def _pipeline(folder):  # noqa: ANN001, ANN202 - transformers' own pipeline on its own copy of the model
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    return pipeline("text-classification", model=model, tokenizer=AutoTokenizer.from_pretrained(folder))


def _per_row_scores(pipe, rows) -> np.ndarray:  # noqa: ANN001
    """Every label's score per row, one row at a time (no padding at all), in label-id order."""
    labels = [pipe.model.config.id2label[i] for i in range(pipe.model.config.num_labels)]
    out = []
    for row in rows:
        found = {d["label"]: d["score"] for d in pipe(row, top_k=None)}
        out.append([found[label] for label in labels])
    return np.asarray(out)


def _softmax(values: np.ndarray) -> np.ndarray:
    shifted = np.exp(values - values.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("arch", ARCHS)
def test_engine_equals_the_per_row_pipeline_in_input_order(checkpoint_factory, arch: str) -> None:
    folder = checkpoint_factory(arch, "SequenceClassification")
    loaded = load_model(LoadRequest(str(folder), "classification"))
    texts = _texts(23)
    encoded = engine.encode_all(loaded, texts)
    # A small budget: many batches of unequal width, sorted away from the input order.
    found = engine.run_logits(loaded, encoded, budget=64, max_rows=5)
    assert len(engine.batches(encoded, 64, 5)) > 4
    expected = _per_row_scores(_pipeline(folder), texts)
    np.testing.assert_allclose(_softmax(found.astype(np.float64)), expected, atol=1e-5)


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_bucketed_widths_give_the_same_logits(checkpoint_factory, arch: str, monkeypatch) -> None:  # noqa: ANN001
    """CUDA rounds padded widths up to GPU_WIDTH_MULTIPLE (fewer shapes, warm kernels): forced here on the
    CPU, the logits equal the exact widths' and no width passes the model's length (RoBERTa: 514 - 2)."""
    folder = checkpoint_factory(arch, "SequenceClassification")
    loaded = load_model(LoadRequest(str(folder), "classification"))
    encoded = engine.encode_all(loaded, _texts(23))
    exact = engine.run_logits(loaded, encoded, budget=64, max_rows=5)
    widths: list[int] = []
    monkeypatch.setattr(engine, "width_multiple", lambda _loaded: 7)
    found = engine.run(loaded, encoded, lambda batch: widths.append(batch.inputs["input_ids"].shape[1])
                       or engine.logits(batch, loaded.model), budget=64, max_rows=5, bucket=True)
    assert widths and all(width % 7 == 0 for width in widths)
    np.testing.assert_allclose(np.stack(found), exact, atol=1e-5)
    assert engine.padded_width(510, 32, 510) == 510 and engine.padded_width(33, 32, 510) == 64
    assert engine.padded_width(600, 32, 0) == 608


def test_a_gpu_leaves_cudnn_attention_out_where_its_device_is_chosen(checkpoint_factory, monkeypatch) -> None:  # noqa: ANN001
    """cuDNN's sdpa builds a graph per new shape (devices.CUDNN_ATTENTION): off on CUDA, the CPU untouched;
    every model load (and training run, and the learning-rate finder) settles it as it chooses its device."""
    import torch

    from bertstudio.core import devices
    from bertstudio.core.models import load_uncached

    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        devices.settle_attention_kernels("cpu")
        assert torch.backends.cuda.cudnn_sdp_enabled()
        devices.settle_attention_kernels("cuda:0")
        assert not torch.backends.cuda.cudnn_sdp_enabled()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)
    seen: list[object] = []
    monkeypatch.setattr(devices, "settle_attention_kernels", seen.append)
    load_uncached(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    monkeypatch.setattr(devices, "available_devices", lambda: ["cpu", "cuda:0"])
    assert devices.normalise_device("CUDA") == "cuda:0"
    assert seen == ["cpu", "cuda:0"]


@pytest.mark.parametrize("arch", ["bert", "albert"])
def test_eager_model_runs_the_batch_with_sdpa_and_is_set_back(checkpoint_factory, arch: str) -> None:
    folder = checkpoint_factory(arch, "SequenceClassification")
    eager = load_model(LoadRequest(str(folder), "classification", attn_implementation="eager"))
    texts = _texts(9)
    seen: list[str] = []

    def forward(batch: engine.Batch):  # noqa: ANN202
        seen.append(eager.model.config._attn_implementation)
        return engine.logits(batch, eager.model)

    found = np.stack(engine.run(eager, engine.encode_all(eager, texts), forward, budget=80))
    assert set(seen) == {"sdpa"} and eager.model.config._attn_implementation == "eager"
    seen.clear()
    engine.run(eager, engine.encode_all(eager, texts[:2]), forward, weights=True)  # weights read: eager stays
    assert set(seen) == {"eager"}
    np.testing.assert_allclose(_softmax(found.astype(np.float64)), _per_row_scores(_pipeline(folder), texts), atol=1e-5)


def test_pairs_some_rows_without_a_pair(checkpoint_factory) -> None:
    folder = checkpoint_factory("bert", "SequenceClassification")
    loaded = load_model(LoadRequest(str(folder), "classification"))
    texts = _texts(8)
    pairs: list[str | None] = [t if i % 3 else None for i, t in enumerate(_texts(8, 20)[::-1])]
    found = engine.run_logits(loaded, engine.encode_all(loaded, texts, pairs), budget=60)
    rows = [{"text": t, "text_pair": p} if p else t for t, p in zip(texts, pairs, strict=True)]
    np.testing.assert_allclose(_softmax(found.astype(np.float64)), _per_row_scores(_pipeline(folder), rows),
                               atol=1e-5)
    encoded = engine.encode_all(loaded, ["a cat"], ["the dog"])
    assert encoded.token_type_ids is not None and set(encoded.token_type_ids[0]) == {0, 1}


def test_a_row_longer_than_the_model_is_cut_and_noted(checkpoint_factory) -> None:
    folder = checkpoint_factory("bert", "SequenceClassification")
    loaded = load_model(LoadRequest(str(folder), "classification"))
    limit = loaded.info.max_length
    texts = ["the cat sat", "dog " * (limit - 2), "dog " * (limit - 1), "the house " * limit]
    encoded = engine.encode_all(loaded, texts)
    assert encoded.cut == (2, 3)  # at the limit exactly is not cut; one token over is
    assert max(encoded.lengths) == limit
    (note,) = engine.cut_note(loaded, encoded, lines=[2, 3, 4, 5])
    assert "2 row(s)" in note and f"{limit} tokens" in note and "lines 4, 5" in note
    found = engine.run_logits(loaded, encoded)
    pipe = _pipeline(folder)
    labels = [pipe.model.config.id2label[i] for i in range(2)]
    for i, text in enumerate(texts):
        scores = {d["label"]: d["score"] for d in pipe(text, top_k=None, truncation=True, max_length=limit)}
        np.testing.assert_allclose(_softmax(found[i:i + 1].astype(np.float64))[0], [scores[x] for x in labels],
                                   atol=1e-5)
    paired = engine.encode_all(loaded, ["the cat", "a " * limit], ["a dog", "b " * 10])
    assert paired.cut == (1,) and max(paired.lengths) == limit


def test_batches_keep_the_token_budget_and_every_row_once(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    encoded = engine.encode_all(loaded, _texts(50, 60))
    groups = engine.batches(encoded, token_budget=100, max_rows=6)
    assert sorted(np.concatenate(groups).tolist()) == list(range(50))
    lengths = encoded.lengths
    for rows in groups:
        assert len(rows) <= 6 and (len(rows) == 1 or len(rows) * lengths[rows].max() <= 100)
    firsts = [int(lengths[rows].max()) for rows in groups]
    assert firsts == sorted(firsts, reverse=True)  # longest first


def test_cancel_between_batches_and_progress_per_batch(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    encoded = engine.encode_all(loaded, _texts(20))
    events: list[ProgressEvent] = []
    control = TaskControl(events.append)
    calls = 0

    def forward(batch: engine.Batch):  # noqa: ANN202
        nonlocal calls
        calls += 1
        if calls == 2:
            control.request_stop()
        return engine.logits(batch, loaded.model)

    with pytest.raises(TaskCancelled):
        engine.run(loaded, encoded, forward, control, budget=10_000, max_rows=4)
    assert calls == 2 and not loaded.model.training
    assert [e.message for e in events] == [f"Scored {n} of 20 rows" for n in (4, 8)]  # one per batch run
    stopped = TaskControl()
    stopped.request_stop()
    with pytest.raises(TaskCancelled):
        engine.encode_all(loaded, ["a cat"], control=stopped)


def test_the_real_topic_classifier_equals_its_pipeline(real_models) -> None:
    folder = real_models["categorium-bert-tiny-topics-en"]
    loaded = load_model(LoadRequest(str(folder), "classification"))
    texts = ["stocks fell after the central bank raised rates", "a recipe for chicken curry with rice",
             "the new sedan has a quiet cabin and a powerful engine " * 3, "buy shoes online",
             "the lawyer filed a lawsuit against the company in federal court on monday"]
    found = engine.run_logits(loaded, engine.encode_all(loaded, texts), budget=40)
    np.testing.assert_allclose(_softmax(found.astype(np.float64)), _per_row_scores(_pipeline(folder), texts),
                               atol=1e-5)


def test_evaluate_classification_equals_the_per_row_pipeline(checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    """Evaluate (now on the engine): each row's label and probabilities as the pipeline gives them for
    that row alone, in the file's order, with the cut row named by its line."""
    import csv

    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.readers import read_dataset

    folder = checkpoint_factory("bert", "SequenceClassification")
    loaded = load_model(LoadRequest(str(folder), "classification"))
    limit = loaded.info.max_length
    texts = [*_texts(11), "the house " * limit]
    data = tmp_path / "rows.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows((t, ("negative", "positive")[i % 2]) for i, t in enumerate(texts))
    result = evaluate(loaded, read_dataset("classification", data))
    pipe = _pipeline(folder)
    scores = _per_row_scores(pipe, [t if i < 11 else " ".join(t.split()[:limit - 2]) for i, t in enumerate(texts)])
    assert [r.prediction for r in result.rows] == [("negative", "positive")[int(i)] for i in scores.argmax(1)]
    np.testing.assert_allclose(result.probabilities, scores, atol=1e-5)
    assert result.classes == ("negative", "positive")
    assert any("1 row(s) were longer" in n.text and "lines 13" in n.text for n in result.notes)


def test_tokenizing_on_the_tokenizers_threads_gives_the_same_rows(checkpoint_factory, monkeypatch) -> None:  # noqa: ANN001
    """The CLI and the window leave TOKENIZERS_PARALLELISM unset (the suite sets it false): the rows must not
    depend on it."""
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    texts = _texts(600, 40)
    found = {}
    for setting in ("true", "false"):
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", setting)
        encoded = engine.encode_all(loaded, texts, [t[::-1] if i % 2 else None for i, t in enumerate(texts)])
        found[setting] = (encoded.input_ids, encoded.token_type_ids)
    assert found["true"] == found["false"]

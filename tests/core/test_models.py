"""Model sources, offline errors, the head report, the cache, devices and the models folder."""

from __future__ import annotations

import time

import pytest

from bertstudio.core import devices, hub
from bertstudio.core.catalog import list_local_models, models_dir_from_env
from bertstudio.core.errors import DeviceError, ModelSourceError, OfflineError
from bertstudio.core.model_checks import judge_heads, probe_heads
from bertstudio.core.models import LoadRequest, ModelCache, load_model, resolve_source


def test_offline_hub_id_fails_fast_and_names_the_model(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-bertstudio-hf-home")
    start = time.monotonic()
    with pytest.raises(OfflineError) as caught:
        load_model(LoadRequest("some-org/not-cached-model", "fill-mask"))
    assert time.monotonic() - start < 5
    assert "some-org/not-cached-model" in caught.value.message
    assert "local model folder" in caught.value.hint


def test_unreachable_hub_is_detected_without_the_env_var(monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.invalid")
    monkeypatch.setattr(hub, "_probe_cache", None)
    start = time.monotonic()
    assert hub.hub_reachable(timeout_s=1.0) is False
    assert time.monotonic() - start < 3


@pytest.mark.parametrize(
    ("source", "message"),
    [("", "No model chosen"), ("../no/such/folder", "neither a folder"), ("not a model id!", "neither a folder")],
)
def test_bad_sources(source: str, message: str) -> None:
    with pytest.raises(ModelSourceError, match=message):
        resolve_source(source)


def test_folder_without_config_and_file_source(tmp_path) -> None:
    with pytest.raises(ModelSourceError, match="no config.json"):
        resolve_source(str(tmp_path))
    file = tmp_path / "weights.bin"
    file.write_bytes(b"x")
    with pytest.raises(ModelSourceError, match="is a file"):
        resolve_source(str(file))


def test_folder_with_config_but_no_weights(tmp_path, checkpoint_factory) -> None:
    source = checkpoint_factory("bert")
    (tmp_path / "config.json").write_text((source / "config.json").read_text())
    with pytest.raises(ModelSourceError, match="no PyTorch weights"):
        load_model(LoadRequest(str(tmp_path), "fill-mask"))


def test_model_info_facts(checkpoint_factory) -> None:
    info = load_model(LoadRequest(str(checkpoint_factory("roberta")), "fill-mask")).info
    assert info.architecture == "RobertaForMaskedLM"
    assert (info.layers, info.heads, info.hidden_size) == (2, 2, 32)
    assert info.mask_token == "<mask>" and "<s>" in info.special_tokens
    assert info.max_length == 64 and info.parameters > 0
    assert info.head_report.complete


def test_head_report_lists_new_weights(checkpoint_factory) -> None:
    report = probe_heads(checkpoint_factory("bert", "Model"), "qa")
    assert set(report.missing) == {"qa_outputs.weight", "qa_outputs.bias"}
    assert "newly initialised" in report.warning("qa")


def test_classifier_head_is_judged_by_the_saved_class(checkpoint_factory) -> None:
    folder = checkpoint_factory("bert", "SequenceClassification")
    assert probe_heads(folder, "classification").complete
    assert not probe_heads(folder, "ner").complete  # same tensor names, different task


@pytest.mark.parametrize("arch", ["bert", "albert", "roberta"])
def test_attention_ignores_the_unused_pooler(checkpoint_factory, arch: str) -> None:
    """A masked-LM checkpoint read as a plain encoder lacks only the pooler, which Attention never reads."""
    folder = checkpoint_factory(arch, "MaskedLM")
    report = probe_heads(folder, "attention")
    assert report.complete and not report.warning("attention")
    assert report.unused and all(name.startswith("pooler.") for name in report.unused)  # known, not hidden
    info = load_model(LoadRequest(str(folder), "attention", attn_implementation="eager")).info
    assert info.head_report.complete and not info.head_warning
    assert "attention" in judge_heads(folder).tasks  # the models list offers it for Attention too


def test_the_pooler_still_counts_where_it_is_used(checkpoint_factory) -> None:
    report = probe_heads(checkpoint_factory("bert", "MaskedLM"), "classification")
    assert {"bert.pooler.dense.weight", "classifier.weight"} <= set(report.missing) and not report.unused
    assert "bert.pooler.dense.weight" in report.warning("classification")


def test_attention_still_warns_about_missing_encoder_weights(checkpoint_factory, tmp_path) -> None:
    """Only the pooler is forgiven: an encoder weight absent from the checkpoint is still reported."""
    import shutil

    from safetensors.torch import load_file, save_file

    folder = tmp_path / "no-query"
    shutil.copytree(checkpoint_factory("bert", "MaskedLM"), folder)
    weights = load_file(folder / "model.safetensors")
    del weights["bert.encoder.layer.0.attention.self.query.weight"]
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    report = probe_heads(folder, "attention")
    assert report.missing == ("encoder.layer.0.attention.self.query.weight",)
    assert "no trained attention head" in report.warning("attention")


def test_chemistry_albert_attention_without_warning_classification_with(real_models) -> None:
    folder = real_models["rxnmapper-albert-smiles-mlm"]  # a masked-LM checkpoint that saved its pooler
    assert probe_heads(folder, "attention").complete
    report = probe_heads(folder, "classification")
    assert report.missing == ("classifier.bias", "classifier.weight") and not report.unused
    assert "no trained classification head" in report.warning("classification")


def test_cache_reuses_and_is_bounded(checkpoint_factory) -> None:
    cache = ModelCache(capacity=2)
    requests = [LoadRequest(str(checkpoint_factory(a)), "fill-mask") for a in ("bert", "albert", "electra")]
    first = cache.get(requests[0])
    assert cache.get(requests[0]) is first
    cache.get(requests[1])
    cache.get(requests[2])
    assert cache.cached(requests[0]) is None and cache.cached(requests[2]) is not None


def test_devices() -> None:
    assert devices.available_devices()[0] == "cpu"
    assert devices.dtypes_for("cpu") == ["float32"]
    with pytest.raises(DeviceError, match="not available"):
        devices.normalise_device("cuda:7" if "cuda:7" not in devices.available_devices() else "tpu")
    with pytest.raises(DeviceError, match="not offered"):
        devices.torch_dtype("cpu", "float16")


@pytest.mark.slow
def test_models_folder_lists_tasks_from_weights(real_models, monkeypatch) -> None:
    root = real_models["all-minilm-l6-v2"].parent
    monkeypatch.setenv("BERTSTUDIO_MODELS_DIR", str(root))
    assert models_dir_from_env() == root
    found = {m.name: m for m in list_local_models(root)}
    # An encoder serves every task that reads the encoder only (similarity, attention): no pooler needed.
    assert set(found["rxnmapper-albert-smiles-mlm"].tasks) == {"fill-mask", "similarity", "attention"}
    assert "fill-mask" not in found["all-minilm-l6-v2"].tasks
    assert "similarity" in found["all-minilm-l6-v2"].tasks
    assert "classification" in found["categorium-bert-tiny-topics-en"].tasks


def test_waiting_for_the_same_model_can_be_cancelled(checkpoint_factory) -> None:
    """A second job asking for a model another job is loading waits for it, but not past a Cancel."""
    import threading

    from tests.conftest import assert_cancel_ends_the_wait

    cache = ModelCache()
    request = LoadRequest(str(checkpoint_factory("bert")), "fill-mask")
    with cache._lock:
        key_lock = cache._key_locks.setdefault(request, threading.Lock())
    key_lock.acquire()  # as if a first job were loading it right now
    try:
        assert_cancel_ends_the_wait(lambda control: cache.get(request, control), stop_after=0.2, within=1.0)
    finally:
        key_lock.release()
    assert cache.get(request).info.architecture == "BertForMaskedLM"

"""LoRA adapters (peft): every head of every architecture trains in full beside the adapter; an
engine run writes peft's own folder; our prediction on it equals PeftModel.from_pretrained's (1e-5),
the merged model equals the adapter model (1e-4); what LoRA cannot go with is refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from bertstudio.core.errors import InputError, ModelSourceError
from bertstudio.core.training import lora
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.engine import train
from tests.core.test_training import toy_csv
from tests.fixtures.checkpoints import ARCHITECTURES, make_config, make_tokenizer

HEADS = ("SequenceClassification", "TokenClassification", "QuestionAnswering", "MultipleChoice", "MaskedLM")
PREFIX = {"bert": "Bert", "distilbert": "DistilBert", "roberta": "Roberta", "albert": "Albert", "electra": "Electra"}


def tiny(arch: str, head: str) -> torch.nn.Module:
    import transformers

    torch.manual_seed(0)
    config = make_config(arch, len(make_tokenizer(arch)), num_labels=2 if head == "QuestionAnswering" else 3)
    return getattr(transformers, f"{PREFIX[arch]}For{head}")(config).eval()


def inputs(arch: str, head: str) -> dict[str, torch.Tensor]:
    ids = torch.tensor([[2, 11, 12, 13, 14, 3], [2, 15, 16, 17, 3, 0]])
    mask = (ids != 0).long()
    if head == "MultipleChoice":
        return {"input_ids": ids[None].repeat(2, 1, 1), "attention_mask": mask[None].repeat(2, 1, 1)}
    return {"input_ids": ids, "attention_mask": mask}


def first_output(model: torch.nn.Module, batch: dict[str, torch.Tensor], grad: bool = False) -> torch.Tensor:
    with torch.set_grad_enabled(grad):
        output = model(**batch)
    return torch.cat([value.flatten() for value in output.values() if isinstance(value, torch.Tensor)])  # every head


@pytest.mark.parametrize("arch", ARCHITECTURES)
@pytest.mark.parametrize("head", [*HEADS, "PreTraining", "NextSentencePrediction"])
def test_every_head_trains_in_full_beside_the_adapter(arch: str, head: str, tmp_path: Path) -> None:
    import transformers
    from peft import PeftModel

    if not hasattr(transformers, f"{PREFIX[arch]}For{head}"):
        pytest.skip(f"{arch} has no {head} head")
    model = tiny(arch, head)
    heads = lora.head_modules(model)
    assert heads and not any(name.startswith(model.base_model_prefix) for name in heads)
    wrapped = lora.wrap(model, lora.LoraSettings(rank=2, targets=lora.ALL_LINEAR), "base")
    trainable = {n for n, p in wrapped.named_parameters() if p.requires_grad}
    assert any("lora_A" in n for n in trainable)
    assert all("lora_" in n or "modules_to_save" in n for n in trainable)  # the encoder's own weights are frozen
    for name in heads:  # each head module trains in full
        assert any(f"{name}.modules_to_save." in n for n in trainable), name
    # a step moves the head and the adapter; saved in peft's format, a fresh base loads it to the same outputs
    batch = inputs(arch, head)
    wrapped.train()
    loss = first_output(wrapped, batch, grad=True).float().pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for p in wrapped.parameters():
            if p.requires_grad and p.grad is not None:
                p.add_(p.grad * 0.5 + 0.01)
    wrapped.eval()
    wrapped.save_pretrained(tmp_path)
    reloaded = PeftModel.from_pretrained(tiny(arch, head), tmp_path).eval()
    torch.testing.assert_close(first_output(reloaded, batch), first_output(wrapped, batch), atol=1e-5, rtol=0)
    merged = lora.apply(tiny(arch, head), tmp_path)
    torch.testing.assert_close(first_output(merged, batch), first_output(wrapped, batch), atol=1e-4, rtol=0)
    assert not torch.allclose(first_output(merged, batch), first_output(tiny(arch, head), batch), atol=1e-4)


def test_query_value_default_names_each_architecture() -> None:
    assert lora.target_pattern(tiny("distilbert", "SequenceClassification"), lora.QUERY_VALUE).endswith("(q_lin|v_lin)")
    assert lora.target_pattern(tiny("albert", "SequenceClassification"), lora.QUERY_VALUE).startswith("albert")
    with pytest.raises(InputError, match="no linear layer named nope"):
        lora.target_pattern(tiny("bert", "SequenceClassification"), "query,nope")


def test_estimate_before_start_equals_the_wrapped_count(checkpoint_factory) -> None:  # noqa: ANN001
    folder = checkpoint_factory("bert", "Model")
    settings = lora.LoraSettings(rank=4)
    estimated = lora.estimate(folder, "AutoModelForSequenceClassification", 2, settings)
    import transformers

    model = transformers.AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2)
    real = lora.count(lora.wrap(model, settings, str(folder)))
    assert estimated == real and 0 < real.trainable < real.total / 10
    assert real.adapter_bytes == 4 * real.trainable


@pytest.fixture(scope="module")
def adapter_run(tmp_path_factory: pytest.TempPathFactory, checkpoint_factory) -> tuple[Path, Path]:  # noqa: ANN001
    root = tmp_path_factory.mktemp("lora")
    base = checkpoint_factory("bert", "Model")
    config = TrainConfig(task="text-classification", model=str(base), train_file=str(toy_csv(root / "toy.csv")),
                         output_dir=str(root / "adapter"), eval_share=0.25, max_steps=12, batch_size=8,
                         learning_rate=5e-3, max_length=16, seed=0, lora_rank=4, lora_targets="all-linear")
    result = train(config)
    return Path(result.output_dir), base


def test_engine_writes_peft_format_and_our_prediction_equals_peft(adapter_run: tuple[Path, Path]) -> None:
    import transformers
    from peft import PeftModel

    from bertstudio.core.models import LoadRequest, load_uncached
    from bertstudio.core.tasks.classification import classify
    from bertstudio.core.training.saving import read_marker

    folder, base = adapter_run
    names = {p.name for p in folder.iterdir()}
    assert {"adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "bertstudio-run.json"} <= names
    assert "config.json" not in names and "model.safetensors" not in names
    assert read_marker(folder)["task"] == "text-classification"
    assert json.loads((folder / "adapter_config.json").read_text())["base_model_name_or_path"] == str(base)
    # plain transformers code: the base with the run's labels, then the adapter
    labels = transformers.AutoConfig.from_pretrained(folder / "head_config.json").id2label
    plain = transformers.AutoModelForSequenceClassification.from_pretrained(base, num_labels=len(labels))
    peft_model = PeftModel.from_pretrained(plain, folder).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    loaded = load_uncached(LoadRequest(str(folder), "classification"))
    assert loaded.info.head_report.complete and loaded.info.folder == str(folder)
    for text in ("the cat is good", "the car is slow"):
        with torch.no_grad():
            probs = peft_model(**tokenizer(text, return_tensors="pt")).logits.softmax(-1)[0]
        ours = {s.label: s.score for s in classify(loaded, text).first.scores}
        assert ours == pytest.approx({labels[i]: float(p) for i, p in enumerate(probs)}, abs=1e-5)
    assert not torch.allclose(probs, torch.full_like(probs, 0.5), atol=1e-3)  # the trained head, not a fresh one


def test_merge_writes_a_plain_model_equal_to_the_adapter(adapter_run: tuple[Path, Path], tmp_path: Path) -> None:
    from bertstudio.core.models import LoadRequest, load_uncached
    from bertstudio.core.tasks.classification import classify
    from bertstudio.core.training.saving import read_marker

    folder, _base = adapter_run
    merged = lora.merge_folder(str(folder), str(tmp_path / "merged"))
    assert (merged / "config.json").is_file() and (merged / "model.safetensors").is_file()
    assert not (merged / "adapter_config.json").exists() and read_marker(merged)["task"] == "text-classification"
    adapter = load_uncached(LoadRequest(str(folder), "classification"))
    plain = load_uncached(LoadRequest(str(merged), "classification"))
    for text in ("the dog is new", "the tree is old"):
        a = {s.label: s.score for s in classify(adapter, text).first.scores}
        b = {s.label: s.score for s in classify(plain, text).first.scores}
        assert a == pytest.approx(b, abs=1e-4)
    with pytest.raises(InputError, match="not a LoRA adapter folder"):
        lora.merge_folder(str(merged), str(tmp_path / "again"))
    with pytest.raises(InputError, match="already exists"):
        (tmp_path / "users").mkdir()
        (tmp_path / "users" / "notes.txt").write_text("mine")
        lora.merge_folder(str(folder), str(tmp_path / "users"))


def test_missing_base_is_named(adapter_run: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    from bertstudio.core.models import LoadRequest, load_uncached

    folder = tmp_path / "moved"
    shutil.copytree(adapter_run[0], folder)
    config = json.loads((folder / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = str(tmp_path / "gone-base")
    (folder / "adapter_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelSourceError, match="trained on the base model '.*gone-base'"):
        load_uncached(LoadRequest(str(folder), "classification"))


def test_what_lora_cannot_go_with_is_refused(tmp_path: Path) -> None:
    config = TrainConfig(task="text-classification", model="m", train_file="t.csv", output_dir=str(tmp_path / "o"),
                         lora_rank=8)
    config.validate()
    replace(config, resume=True).validate()  # a stopped LoRA run resumes (test_lora_borders.py)
    with pytest.raises(InputError, match="Distillation cannot train a LoRA"):
        replace(config, task="distill").validate()
    with pytest.raises(InputError, match="not module names"):
        replace(config, lora_targets="query;drop table").validate()
    with pytest.raises(InputError, match="LoRA rank"):
        replace(config, lora_rank=-1).validate()


def test_models_list_shows_the_adapter_with_its_tasks(adapter_run: tuple[Path, Path]) -> None:
    from bertstudio.core.catalog import glance, list_local_models

    folder, _base = adapter_run
    (listed,) = [m for m in list_local_models(folder.parent) if m.path == str(folder)]
    assert listed.architecture == "BertForSequenceClassification (LoRA adapter)" and listed.model_type == "bert"
    assert "classification" in listed.tasks and not listed.problem
    assert not glance(folder).judged

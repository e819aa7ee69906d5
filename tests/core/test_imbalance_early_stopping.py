"""Class weights and the focal loss (issue 41 item 2), early stopping with the best model kept (item 3)
and the model card (item 8)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from bertstudio.core.tasks.classification import imbalance
from bertstudio.core.tasks.classification.imbalance import LossSettings
from bertstudio.core.training import model_card
from bertstudio.core.training.config import TrainConfig
from tests.core.test_multilabel import multilabel_csv
from tests.core.test_training import collect, toy_csv


def test_balanced_weights_are_sklearns() -> None:
    from sklearn.utils.class_weight import compute_class_weight

    labels = [0] * 12 + [1] * 3 + [2] * 1
    expected = compute_class_weight("balanced", classes=np.arange(3), y=np.array(labels))
    assert imbalance.class_weights(labels, 3) == pytest.approx(expected)
    assert imbalance.class_weights([0, 0, 2], 3)[1] == 1.0  # a class absent from the rows keeps weight 1
    matrix = [[1, 0], [1, 0], [1, 1], [0, 0]]
    assert imbalance.positive_weights(matrix) == pytest.approx([1 / 3, 3.0])


def test_losses_match_torch_and_focal_down_weighs_easy_rows() -> None:
    logits = torch.tensor([[3.0, -1.0, 0.0], [0.1, 0.2, 0.0], [-2.0, 2.0, 0.5]])
    labels = torch.tensor([0, 2, 1])
    weights = torch.tensor([0.5, 2.0, 1.0])
    ce = LossSettings("balanced", "cross-entropy", 2.0, False)
    assert imbalance.classification_loss(logits, labels, ce, weights) == pytest.approx(
        float(torch.nn.functional.cross_entropy(logits, labels, weight=weights)))
    plain, focal0 = LossSettings("none", "cross-entropy", 0.0, False), LossSettings("none", "focal", 0.0, False)
    assert imbalance.classification_loss(logits, labels, focal0, None) == pytest.approx(
        float(imbalance.classification_loss(logits, labels, plain, None)))
    focal = LossSettings("none", "focal", 2.0, False)
    assert imbalance.classification_loss(logits, labels, focal, None) < imbalance.classification_loss(
        logits, labels, plain, None)
    targets = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    positive = torch.tensor([1.0, 3.0, 0.5])
    multi = LossSettings("balanced", "cross-entropy", 2.0, True)
    assert imbalance.classification_loss(logits, targets, multi, positive) == pytest.approx(float(
        torch.nn.functional.binary_cross_entropy_with_logits(logits, targets, pos_weight=positive)))
    multi_focal0 = LossSettings("none", "focal", 0.0, True)
    assert imbalance.classification_loss(logits, targets, multi_focal0, None) == pytest.approx(float(
        torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)))


def test_trainer_uses_the_balanced_weights_of_the_training_rows(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    from transformers import Trainer, TrainingArguments

    from bertstudio.core.training.trainable import TRAINABLE

    task = TRAINABLE["text-classification"]
    rows = ["text,label"] + [f"the cat is good {i},positive" for i in range(12)] + \
        [f"the dog is bad {i},negative" for i in range(3)]
    (tmp_path / "skew.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    config = TrainConfig(task="classify", model=str(checkpoint_factory("bert", "Model")),
                         train_file=str(tmp_path / "skew.csv"), output_dir=str(tmp_path / "o"), eval_share=0.0,
                         class_weights="balanced")
    data = task.read(config)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(config.model)
    model, _ = task.load(Path(config.model), config, data.labels, tokenizer)
    encoded, _ = task.encode(tokenizer, data.train, data.labels, 16, False)
    trainer = task.trainer_class(Trainer)(model=model, args=TrainingArguments(str(tmp_path / "c"), use_cpu=True,
                                                                            report_to=[]),
                                          train_dataset=encoded, data_collator=task.collator(tokenizer))
    assert data.labels == ["negative", "positive"]
    assert trainer.class_weight_values == pytest.approx([15 / (2 * 3), 15 / (2 * 12)])
    batch = task.collator(tokenizer)(encoded[:4] + encoded[-2:])
    loss = trainer.compute_loss(model, dict(batch))
    logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
    expected = torch.nn.functional.cross_entropy(logits, batch["labels"], weight=torch.tensor([2.5, 0.625]))
    assert float(loss.detach()) == pytest.approx(float(expected.detach()), rel=1e-5)


def test_label_distribution_suggests_balanced_weights(tmp_path: Path) -> None:
    rows = ["text,label"] + ["a,big"] * 12 + ["b,small"] * 2
    (tmp_path / "skew.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    found = imbalance.label_distribution(tmp_path / "skew.csv")
    assert found.counts == {"big": 12, "small": 2} and not found.multi_label and found.ratio == 6.0
    assert found.suggest_balanced and "balanced" in found.advice
    even = imbalance.label_distribution(multilabel_csv(tmp_path / "ml.csv", 32))
    assert even.multi_label and even.counts["animal"] == 8 and not even.suggest_balanced


def _early_config(tmp_path: Path, model: str, **extra: object) -> TrainConfig:
    return TrainConfig(task="classify", model=model, train_file=str(toy_csv(tmp_path / "toy.csv", 48)),
                       output_dir=str(tmp_path / "out"), eval_share=0.25, max_steps=60, eval_steps=3,
                       batch_size=8, learning_rate=3e-3, max_length=16, seed=0, early_stopping=1, **extra)


@pytest.mark.parametrize("lora", [0, 4])
def test_early_stopping_keeps_the_best_model(tmp_path: Path, checkpoint_factory, lora: int) -> None:  # noqa: ANN001
    from bertstudio.core.training.engine import train

    control, events = collect()
    result = train(_early_config(tmp_path, str(checkpoint_factory("bert", "Model")), lora_rank=lora), control)
    evals = [e for e in events if e.kind == "eval"]
    best = next(e for e in events if e.kind == "best")
    assert result.step < 60 and best.metrics["stopped_step"] == result.step  # it stopped before the end
    scores = {e.step: e.metrics["macro_f1"] for e in evals[:-1]}  # the last is the kept model's own evaluation
    assert best.step == max(scores, key=lambda step: (scores[step], -step))
    assert result.metrics["eval_macro_f1"] == pytest.approx(scores[best.step])  # the model saved is the best one
    assert (Path(result.output_dir) / "README.md").is_file()


def test_search_trials_keep_early_stopping(tmp_path: Path) -> None:
    from bertstudio.core.training.search import _trial_config
    from bertstudio.core.training.search_space import default_space

    config = _early_config(tmp_path, "m")
    space = default_space(config)
    trial = _trial_config(config, space, {"learning_rate": 2e-5, "batch_size": 16}, tmp_path / "t0")
    assert trial.early_stopping == 1 and trial.eval_steps == 3 and trial.learning_rate == 2e-5


def _facts() -> model_card.CardFacts:
    return model_card.CardFacts(
        task="text-classification", base_model="sentence-transformers/all-MiniLM-L6-v2",
        pipeline_tag="text-classification", labels=("neg", "pos"), train_file="reviews.csv", eval_file=None,
        hyperparameters={"learning_rate": 5e-5, "epochs": 3.0}, metrics={"eval_macro_f1": 0.9, "train_loss": 0.2},
        distribution={"train": {"neg": 10, "pos": 12}})


def test_model_card_hooks_and_never_replacing_the_users_readme(tmp_path: Path) -> None:
    from huggingface_hub import ModelCard

    assert model_card.write_card(tmp_path, _facts())
    card = ModelCard.load(tmp_path / "README.md")
    assert card.data.base_model == "sentence-transformers/all-MiniLM-L6-v2" and card.data.labels == ["neg", "pos"]
    assert card.data.metrics == ["macro_f1"] and "| learning_rate | 5e-05 |" in card.text
    assert "Cross-validated" not in card.text and "Label issues" not in card.text
    extended = replace(_facts(), cross_validation={"folds": [{"macro_f1": 0.8}, {"macro_f1": 0.9}],
                                                   "mean": {"macro_f1": 0.85}, "sd": {"macro_f1": 0.05}},
                       label_issues=[{"row": 3, "given": "neg", "suggested": "pos", "self_confidence": 0.1}])
    assert model_card.write_card(tmp_path, extended)  # ours: replaced
    text = (tmp_path / "README.md").read_text()
    assert "0.8500 +- 0.0500" in text and "| 3 | neg | pos | 0.1000 |" in text
    users = tmp_path / "user"
    users.mkdir()
    (users / "README.md").write_text("# my notes\n", encoding="utf-8")
    assert not model_card.write_card(users, _facts())
    assert (users / "README.md").read_text() == "# my notes\n"
    assert [p.name for p in users.iterdir()] == ["README.md"]  # no partial file left behind


def test_card_facts_of_a_run_name_a_local_base_by_its_folder(tmp_path: Path) -> None:
    from bertstudio.core.training.trainable import TRAINABLE

    config = TrainConfig(task="classify", model=str(tmp_path), train_file=str(toy_csv(tmp_path / "toy.csv", 8)),
                         output_dir=str(tmp_path / "o"), eval_share=0.25)
    facts = model_card.CardFacts.of_run(config, TRAINABLE["text-classification"].read(config), {"eval_loss": 1.0})
    assert facts.base_model == tmp_path.name and facts.distribution["train"] and facts.distribution["validation"]
    assert json.loads(json.dumps(facts.hyperparameters))["class_weights"] == "none"


def test_each_task_stops_on_a_metric_its_validation_reports() -> None:
    from bertstudio.core.training import early_stopping
    from bertstudio.core.training.trainable import TRAINABLE

    config = TrainConfig(task="classify", model="m", train_file="t.csv", output_dir="o", early_stopping=2,
                         eval_steps=5)
    chosen = {key: early_stopping.arguments(config, task, 100, True)["metric_for_best_model"]
              for key, task in TRAINABLE.items()}
    assert chosen["text-classification"] == "macro_f1" and chosen["distill"] == "accuracy"
    assert chosen["token-classification"] == "loss"
    assert early_stopping.arguments(config, TRAINABLE["distill"], 100, False) == {}  # nothing validated
    assert early_stopping.interval(replace(config, eval_steps=0, epochs=4.0), 100) == 25  # once per epoch


def test_the_best_event_says_why_the_run_ended() -> None:
    from types import SimpleNamespace

    from bertstudio.core.training import early_stopping
    from bertstudio.core.training.trainable import TRAINABLE

    config = TrainConfig(task="classify", model="m", train_file="t.csv", output_dir="o", early_stopping=2)
    task = TRAINABLE["text-classification"]
    state = SimpleNamespace(best_global_step=20, global_step=40, max_steps=60, best_metric=0.75)
    event = early_stopping.best_event(config, task, state)
    assert event is not None and event.kind == "best" and event.step == 20
    assert event.metrics == {"best_step": 20.0, "stopped_step": 40.0, "best_macro_f1": 0.75}
    assert "after 2 evaluation(s) without a better one" in event.message
    assert "you stopped it at step 40" in early_stopping.best_event(config, task, state, by_user=True).message
    state.global_step = 60
    assert "went to its last step" in early_stopping.best_event(config, task, state).message
    assert early_stopping.best_event(replace(config, early_stopping=0), task, state) is None

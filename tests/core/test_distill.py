"""Distillation: the student's layers come from the teacher's chosen layers, the loss is Hinton's
KL * T^2 mixed with the cross-entropy (checked by hand on one batch), label sets must match,
a tiny teacher -> 1-layer student run trains, reports teacher vs student, stops and resumes."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.cli import build_parser
from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification.train_distill import (
    Distillation,
    chosen_layers,
    cut_layers,
    distillation_loss,
)
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.distill_config import DistillConfig
from bertstudio.core.training.engine import train
from bertstudio.core.training.events import TrainingEvent
from bertstudio.core.training.trainable import TRAINABLE
from tests.core.test_training_tasks import reference_lrs

KEY = next(key for key, task in TRAINABLE.items() if getattr(task, "distils", False))


def toy_csv(path: Path, count: int = 32, labels: tuple[str, str] = ("positive", "negative")) -> Path:
    rows = ["text,label"]
    nouns = ["cat", "dog", "car", "house", "book", "game", "film", "tree"]
    for i in range(count):
        word, label = ("good", labels[0]) if i % 2 == 0 else ("bad", labels[1])
        rows.append(f"the {nouns[i % len(nouns)]} is {word},{label}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def config(tmp_path: Path, checkpoint_factory) -> TrainConfig:  # noqa: ANN001
    teacher = str(checkpoint_factory("bert", "SequenceClassification"))
    return TrainConfig(task=KEY, train_file=str(toy_csv(tmp_path / "toy.csv")), output_dir=str(tmp_path / "out"),
                       eval_share=0.25, max_steps=4, batch_size=8, learning_rate=1e-3, max_length=16, seed=0,
                       eval_steps=2, distill=DistillConfig(teacher=teacher, student_layers=1, temperature=2.0,
                                                           alpha=0.7))


def test_layer_choice_follows_distilbert() -> None:
    assert chosen_layers(12, 6) == [0, 2, 4, 6, 8, 10]  # DistilBERT's every other layer
    assert chosen_layers(6, 3) == [0, 2, 4] and chosen_layers(6, 2) == [0, 3] and chosen_layers(6, 1) == [0]
    assert chosen_layers(6, 4) == [0, 2, 3, 5]  # an even spread, first and last kept
    with pytest.raises(InputError, match="1 to 6"):
        chosen_layers(6, 7)


@pytest.mark.parametrize("arch", ["bert", "distilbert"])
def test_student_layers_are_the_teachers_chosen_layers(arch: str) -> None:
    import torch
    import transformers

    from tests.fixtures.checkpoints import make_config

    torch.manual_seed(0)
    config = make_config(arch, 100, num_labels=2)
    config.num_hidden_layers = 4
    cls = transformers.BertForSequenceClassification if arch == "bert" else \
        transformers.DistilBertForSequenceClassification
    teacher = cls(config).eval()
    student, chosen = cut_layers(teacher, 2)
    assert chosen == [0, 2] and student.config.num_hidden_layers == 2
    layers = (lambda m: m.bert.encoder.layer) if arch == "bert" else (lambda m: m.distilbert.transformer.layer)
    for s_index, t_index in enumerate(chosen):
        s_state, t_state = layers(student)[s_index].state_dict(), layers(teacher)[t_index].state_dict()
        assert s_state.keys() == t_state.keys()
        assert all(torch.equal(s_state[k], t_state[k]) for k in s_state)
    teacher_rest = {k: v for k, v in teacher.state_dict().items() if ".layer." not in k}
    student_state = student.state_dict()
    assert all(torch.equal(student_state[k], v) for k, v in teacher_rest.items())  # embeddings, head


def test_loss_is_kl_times_t_squared_mixed_with_cross_entropy(config: TrainConfig) -> None:
    """Through the Trainer subclass on one real batch, against a hand computation."""
    import torch
    from transformers import AutoTokenizer, DataCollatorWithPadding, Trainer, TrainingArguments

    task = Distillation()
    data = task.read(config)
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    student, _ = task.load(Path(config.model), config, data.labels, tokenizer)
    rows, _ = task.encode(tokenizer, data.train, data.labels, 16, False)
    trainer = task.trainer_class(Trainer)(model=student, args=TrainingArguments(
        output_dir=str(Path(config.output_dir).parent / "args"), use_cpu=True, report_to="none"))
    batch = DataCollatorWithPadding(tokenizer)(rows[:8])
    student.eval()
    torch.manual_seed(1)
    with torch.no_grad():  # a student that differs from its teacher, so the KL term is not ~0
        student.classifier.weight.add_(torch.randn_like(student.classifier.weight))
    with torch.no_grad():
        loss = trainer.compute_loss(student, dict(batch))
        inputs = {k: v for k, v in batch.items() if k != "labels"}
        s, t = student(**inputs).logits, trainer.teacher.model(**inputs).logits
    temperature, alpha, labels = 2.0, 0.7, batch["labels"]
    p_t = torch.exp(t / temperature) / torch.exp(t / temperature).sum(-1, keepdim=True)
    log_p_s = s / temperature - torch.log(torch.exp(s / temperature).sum(-1, keepdim=True))
    kl = (p_t * (torch.log(p_t) - log_p_s)).sum() / len(s)
    ce = -(s - torch.log(torch.exp(s).sum(-1, keepdim=True)))[torch.arange(len(s)), labels].mean()
    assert float(kl) > 1e-3
    assert float(loss) == pytest.approx(float(alpha * kl * temperature**2 + (1 - alpha) * ce), rel=1e-5)
    assert float(distillation_loss(s, t, None, temperature, alpha)) == pytest.approx(float(kl * 4), rel=1e-5)


def test_label_sets_must_match(config: TrainConfig, tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    other = tmp_path / "other-labels"
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    source = checkpoint_factory("bert", "SequenceClassification")
    model = AutoModelForSequenceClassification.from_pretrained(source, id2label={0: "spam", 1: "ham"},
                                                               label2id={"spam": 0, "ham": 1})
    model.save_pretrained(other)
    AutoTokenizer.from_pretrained(source).save_pretrained(other)
    student = replace(config, model=str(other), distill=replace(config.distill, student_layers=0))
    with pytest.raises(InputError, match="not the teacher's"):
        Distillation().read(student)
    with pytest.raises(InputError, match="not one of the teacher's"):
        Distillation().read(replace(config, train_file=str(toy_csv(tmp_path / "odd.csv", labels=("good", "bad")))))
    with pytest.raises(InputError, match="not a fine-tuned sequence classifier"):
        Distillation().read(replace(config, distill=replace(config.distill,
                                                            teacher=str(checkpoint_factory("bert", "Model")))))


def test_tiny_run_reports_teacher_vs_student_and_resumes(config: TrainConfig) -> None:
    from transformers import AutoConfig

    stop = threading.Event()
    events: list[TrainingEvent] = []

    def on_event(event) -> None:  # noqa: ANN001
        if isinstance(event.payload, TrainingEvent):
            events.append(event.payload)
            if event.payload.kind == "step" and event.payload.step == 3:
                stop.set()  # after the evaluation at step 2

    config = replace(config, max_steps=6, warmup_steps=2)
    first = train(config, TaskControl(on_event), stop_event=stop)
    assert first.stopped and 3 <= first.step < 6
    assert AutoConfig.from_pretrained(first.output_dir).num_hidden_layers == 1
    evaluated = [e.metrics for e in events if e.kind == "eval"]
    assert evaluated and {"agreement", "accuracy", "teacher_accuracy"} <= set(evaluated[0])
    resumed: list[TrainingEvent] = []
    control = TaskControl(lambda e: resumed.append(e.payload) if isinstance(e.payload, TrainingEvent) else None)
    second = train(replace(config, resume=True), control)
    assert not second.stopped and second.step == 6 and "eval_agreement" in second.metrics
    logged = {e.step: e.learning_rate for e in events + resumed if e.kind == "step"}
    assert sorted(logged) == [1, 2, 3, 4, 5, 6]  # the resume continues get_scheduler's curve of the whole run
    assert [logged[step] for step in sorted(logged)] == pytest.approx(reference_lrs(config, 6), rel=1e-9, abs=1e-15)
    log = [json.loads(line) for line in (Path(second.output_dir) / "events.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log if e["event"] == "step"] == [1, 2, 3, 4, 5, 6]
    saved = json.loads((Path(second.output_dir) / "training_config.json").read_text())
    assert saved["distill"]["student_layers"] == 1 and saved["model"] == config.distill.teacher


def test_cli_options_build_the_distill_config() -> None:
    from bertstudio.cli.train import config_from_args

    args = build_parser().parse_args(["train", "--task", KEY, "--teacher", "t", "--student-layers", "3",
                                      "--temperature", "4", "--alpha", "0.9", "--train", "d.csv", "--output", "o"])
    made = config_from_args(args)
    assert made.distill == DistillConfig("t", 3, 4.0, 0.9) and made.model == "t"
    with pytest.raises(InputError, match="--teacher"):
        config_from_args(build_parser().parse_args(["train", "--task", next(k for k in TRAINABLE if k != KEY),
                                                    "--teacher", "t", "--model", "m", "--train", "d", "--output", "o"]))
    with pytest.raises(InputError, match=r"Soft-target weight \(--alpha\) is 1.5"):
        replace(made, distill=DistillConfig("t", 3, 4.0, 1.5)).validate()

"""Training engine: loss falls, the logged LR is get_scheduler's, stop saves, resume continues,
bad data is reported by line, and real MiniLM runs beat chance / the untrained heads."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.ner.conll import read_conll
from bertstudio.core.tasks.pretraining.corpus import read_corpus
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.data import read_labelled
from bertstudio.core.training.engine import plan, train
from bertstudio.core.training.events import TrainingEvent
from bertstudio.core.training.schedules import SCHEDULERS, planned_lr
from bertstudio.resources import resource_path
from tests.fixtures import FIXTURE_CACHE as FIXTURES

DATASETS = resource_path("datasets")

GOOD = ["good", "new", "big", "fast"]
BAD = ["bad", "old", "small", "slow"]
RECIPE_VERSION = "1"  # bump when the engine changes what a cached run would learn


def toy_csv(path: Path, count: int = 64) -> Path:
    """A learnable toy task in the tiny vocabulary: the adjective decides the label."""
    rows = ["text,label"]
    nouns = ["cat", "dog", "car", "house", "book", "game", "film", "tree"]
    for i in range(count):
        words, label = (GOOD, "positive") if i % 2 == 0 else (BAD, "negative")
        rows.append(f"the {nouns[i % len(nouns)]} is {words[(i // 2) % len(words)]},{label}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def collect() -> tuple[TaskControl, list[TrainingEvent]]:
    events: list[TrainingEvent] = []
    return TaskControl(lambda e: events.append(e.payload) if isinstance(e.payload, TrainingEvent) else None), events


@pytest.fixture
def toy_config(tmp_path: Path, checkpoint_factory) -> TrainConfig:  # noqa: ANN001
    return TrainConfig(
        task="text-classification", model=str(checkpoint_factory("bert", "Model")),
        train_file=str(toy_csv(tmp_path / "toy.csv")), output_dir=str(tmp_path / "out"), eval_share=0.0,
        max_steps=40, batch_size=8, learning_rate=3e-3, max_length=16, seed=0,
    )


def test_loss_falls_and_model_opens_as_classifier(toy_config: TrainConfig) -> None:
    control, events = collect()
    result = train(toy_config, control)
    losses = [e.loss for e in events if e.kind == "step"]
    assert len(losses) == 40
    assert sum(losses[-5:]) / 5 < 0.65 * sum(losses[:5]) / 5
    assert events[0].kind == "plan" and "decay applies to" in events[0].message.replace("weight decay", "decay")
    # the saved folder opens in the Classification tab's loader with a complete, labelled head
    from bertstudio.core.models import LoadRequest, load_uncached

    loaded = load_uncached(LoadRequest(result.output_dir, "classification"))
    assert loaded.info.head_report.complete and set(loaded.info.id2label.values()) == {"negative", "positive"}
    assert (Path(result.output_dir) / "events.jsonl").is_file()
    logged = [json.loads(line) for line in (Path(result.output_dir) / "events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in logged].count("step") == 40 and logged[-1]["event"] == "done"
    assert not Path(result.output_dir + ".partial").exists()


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_logged_lr_is_get_schedulers_at_every_step(toy_config: TrainConfig, scheduler: str) -> None:
    import torch
    from transformers import get_scheduler

    config = replace(toy_config, scheduler=scheduler, max_steps=12, warmup_steps=3, learning_rate=1e-3)
    control, events = collect()
    train(config, control)
    logged = {e.step: e.learning_rate for e in events if e.kind == "step"}
    assert sorted(logged) == list(range(1, 13))
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-3)
    reference = get_scheduler(scheduler, optimizer, num_warmup_steps=3, num_training_steps=12)
    planned = planned_lr(scheduler, 1e-3, 12, 3)
    for step in range(1, 13):
        expected = reference.get_last_lr()[0]  # the rate the optimiser uses for this step
        assert logged[step] == pytest.approx(expected, rel=1e-9, abs=1e-15), (scheduler, step)
        assert planned[step - 1] == pytest.approx(expected, rel=1e-9, abs=1e-15)
        optimizer.step()
        reference.step()


def test_warmup_ratio_and_plan(toy_config: TrainConfig) -> None:
    info = plan(replace(toy_config, max_steps=0, epochs=2, warmup_ratio=0.25))
    assert info.train_examples == 64 and info.steps_per_epoch == 8
    assert info.total_steps == 16 and info.warmup_steps == 4


def test_stop_saves_a_loadable_model_and_resume_continues(toy_config: TrainConfig) -> None:
    from transformers import AutoModelForSequenceClassification

    stop = threading.Event()
    events: list[TrainingEvent] = []

    def on_event(event) -> None:  # noqa: ANN001
        if isinstance(event.payload, TrainingEvent):
            events.append(event.payload)
            if event.payload.kind == "step" and event.payload.step == 4:
                stop.set()

    config = replace(toy_config, max_steps=20)
    first = train(config, TaskControl(on_event), stop_event=stop)
    assert first.stopped and 4 <= first.step < 20
    model = AutoModelForSequenceClassification.from_pretrained(first.output_dir)
    assert model.config.id2label == {0: "negative", 1: "positive"}
    assert model.config.architectures == ["BertForSequenceClassification"]
    assert any(Path(first.output_dir + ".checkpoints").glob(f"checkpoint-{first.step}"))

    control, resumed = collect()
    second = train(replace(config, resume=True), control)
    steps = [e.step for e in resumed if e.kind == "step"]
    assert steps[0] == first.step + 1 and steps[-1] == 20 and not second.stopped
    log = [json.loads(line) for line in (Path(second.output_dir) / "events.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log if e["event"] == "step"] == list(range(1, first.step + 1)) + steps


def test_resume_without_checkpoint_is_explained(toy_config: TrainConfig) -> None:
    with pytest.raises(InputError, match="no checkpoint to resume"):
        train(replace(toy_config, resume=True))


def test_malformed_files_name_their_lines(tmp_path: Path) -> None:
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("text,label\ngood one,pos\ntoo,many,fields\n,neg\nfine,\nok,neg\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_labelled(bad_csv)
    message = str(caught.value)
    assert "3 malformed" in message and "line 3" in message and "line 4" in message and "line 5" in message
    bad_jsonl = tmp_path / "bad.jsonl"
    bad_jsonl.write_text('{"text": "a", "label": "x"}\n{"text": "b", "label": \n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: not valid JSON.*line 3: not a JSON object"):
        read_labelled(bad_jsonl)
    bad_conll = tmp_path / "bad.conll"
    bad_conll.write_text("John B-PER\nlives O\nin\n\nParis B-LOC\nis PLACE\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3: 'in' has a token but no tag.*line 6: tag 'PLACE'"):
        read_conll(bad_conll)
    one_doc = tmp_path / "one.txt"
    one_doc.write_text("only one document\nwith two lines\n", encoding="utf-8")
    with pytest.raises(InputError, match="at least two documents"):
        read_corpus(one_doc)


def test_demo_datasets_read_cleanly() -> None:
    assert len(read_labelled(DATASETS / "reviews_train.csv")) == 1500
    assert len(read_conll(DATASETS / "ner_train.conll")) == 200
    assert len(read_corpus(DATASETS / "pretraining_corpus.txt")) == 32


def test_cli_json_lines(tmp_path: Path, checkpoint_factory, capsys) -> None:  # noqa: ANN001
    from bertstudio.cli import main

    code = main(["train", "--model", str(checkpoint_factory("bert", "Model")), "--task", "token-classification",
                 "--train", str(DATASETS / "ner_eval.conll"), "--output", str(tmp_path / "ner"),
                 "--max-steps", "3", "--batch-size", "8", "--max-length", "32", "--warmup-steps", "1", "--json"])
    assert code == 0
    shown = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert shown[0] == {"event": "prepare", "message": "Tokenizing 36 training and 4 validation examples…"}
    lines = [line for line in shown if line["event"] != "prepare"]  # progress before the plan
    assert [line["event"] for line in lines if line["event"] == "step"] == ["step"] * 3
    assert {"step", "loss", "learning_rate"} <= set(lines[1])
    assert lines[-1]["event"] == "result" and lines[-1]["output_dir"] == str((tmp_path / "ner").resolve())
    assert "eval_f1" in lines[-1]["metrics"] and lines[-1]["open_in"] == ["ner"]


def test_pretraining_from_scratch_opens_in_fill_mask_and_nsp(tmp_path: Path) -> None:
    from bertstudio.core.models import LoadRequest, load_uncached
    from bertstudio.core.training.scratch_config import ScratchConfig

    config = TrainConfig(
        task="pretraining", train_file=str(DATASETS / "pretraining_corpus.txt"), output_dir=str(tmp_path / "pt"),
        scratch=ScratchConfig(vocab_size=400, hidden_size=32, intermediate_size=64, max_length=48),
        max_steps=4, batch_size=8, max_length=48,
    )
    result = train(config)
    assert result.open_in == ("fill-mask", "nsp")
    for task in ("fill-mask", "nsp", "pretraining"):
        loaded = load_uncached(LoadRequest(result.output_dir, task))
        assert loaded.info.head_report.complete, task
    assert json.loads((Path(result.output_dir) / "config.json").read_text())["architectures"] == ["BertForPreTraining"]


def test_masked_lm_only_for_architectures_without_nsp(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    config = TrainConfig(
        task="pretraining", model=str(checkpoint_factory("roberta", "MaskedLM")), output_dir=str(tmp_path / "rb"),
        train_file=str(DATASETS / "pretraining_corpus.txt"), max_steps=3, batch_size=8, max_length=32,
    )
    result = train(config)
    assert result.open_in == ("fill-mask",) and "eval_mlm_accuracy" in result.metrics
    assert "nsp_accuracy" not in " ".join(result.metrics)


# -- real all-MiniLM-L6-v2 runs, cached ---------------------------------------------------------
def cached_run(name: str, config: TrainConfig) -> Path:
    """Train once per recipe (config + data + RECIPE_VERSION), reuse the saved model afterwards."""
    recipe = hashlib.sha256(RECIPE_VERSION.encode())
    # Names, not paths: the files' bytes are hashed below, and a clone elsewhere (CI) must reuse the cache.
    settings = asdict(replace(config, output_dir="", model=Path(config.model).name,
                              train_file=Path(config.train_file).name,
                              eval_file=Path(config.eval_file).name if config.eval_file else config.eval_file))
    settings.pop("overwrite")  # where the model goes, not what it learns
    recipe.update(json.dumps(settings, sort_keys=True, default=str).encode())
    recipe.update(Path(config.train_file).read_bytes())
    if config.eval_file:
        recipe.update(Path(config.eval_file).read_bytes())
    folder = FIXTURES / f"{name}-{recipe.hexdigest()[:10]}"
    if not (folder / "model.safetensors").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        train(replace(config, output_dir=str(folder)))
    return folder


@pytest.mark.slow
def test_minilm_classification_beats_chance(real_models) -> None:  # noqa: ANN001
    folder = cached_run("minilm-reviews", TrainConfig(
        task="text-classification", model=str(real_models["all-minilm-l6-v2"]),
        train_file=str(DATASETS / "reviews_train.csv"), eval_file=str(DATASETS / "reviews_eval.csv"),
        output_dir="", max_steps=90, batch_size=16, learning_rate=2e-4, warmup_ratio=0.1, max_length=48,
    ))
    metrics = json.loads((folder / "metrics.json").read_text())
    # Real, noisy reviews of films and domains training never saw (issue 29 #24): about one epoch gives
    # 0.72 (30 steps at 1e-4 gave 0.65). Chance is 0.5 on 240 balanced rows (sd 0.032).
    assert metrics["eval_accuracy"] >= 0.68, metrics


@pytest.mark.slow
def test_minilm_pretraining_beats_untrained_heads(real_models) -> None:  # noqa: ANN001
    import torch
    from transformers import AutoModelForNextSentencePrediction, AutoTokenizer

    from bertstudio.core.models import LoadRequest, load_uncached
    from bertstudio.core.tasks.fill_mask import predict

    base = str(real_models["all-minilm-l6-v2"])
    folder = cached_run("minilm-pretrain", TrainConfig(
        task="pretraining", model=base, train_file=str(DATASETS / "pretraining_corpus.txt"), eval_share=0.0,
        output_dir="", max_steps=60, batch_size=16, learning_rate=2e-4, warmup_ratio=0.1, max_length=40,
    ))
    documents = read_corpus(DATASETS / "pretraining_heldout.txt")

    def fill_mask_hits(source: str) -> int:
        """Held-out sentences with one word masked: how often the word is in the top 5."""
        loaded = load_uncached(LoadRequest(source, "fill-mask"))
        hits = 0
        for sentence in (s for d in documents for s in d):
            words = sentence.rstrip(".").split()
            for i in range(1, len(words), 3):
                masked = " ".join(words[:i] + ["[MASK]"] + words[i + 1:]) + "."
                top = [c.token for c in predict(loaded, masked, 5).masks[0].candidates]
                hits += words[i].lower() in top
        return hits

    def nsp_auc(source: str) -> float:
        """How often a true next sentence gets a higher "is next" probability than a random one."""
        tokenizer = AutoTokenizer.from_pretrained(source)
        torch.manual_seed(0)  # the untrained head is random: fix it
        model = AutoModelForNextSentencePrediction.from_pretrained(source).eval()
        pairs = [(d[0], d[1]) for d in documents]
        pairs += [(d[0], documents[(k + 3) % len(documents)][1]) for k, d in enumerate(documents)]
        with torch.inference_mode():
            batch = tokenizer([a for a, _ in pairs], [b for _, b in pairs], padding=True, return_tensors="pt")
            is_next = model(**batch).logits.softmax(-1)[:, 0].tolist()
        true, random = is_next[:len(documents)], is_next[len(documents):]
        return sum(t > r for t in true for r in random) / (len(true) * len(random))

    trained_hits, untrained_hits = fill_mask_hits(str(folder)), fill_mask_hits(base)
    trained_nsp, untrained_nsp = nsp_auc(str(folder)), nsp_auc(base)
    assert trained_hits > untrained_hits + 5, (trained_hits, untrained_hits)
    # 60 CPU steps teach NSP only a little (seen: 0.58 vs 0.47); the ranking must still beat the random head
    assert trained_nsp > untrained_nsp and trained_nsp > 0.5, (trained_nsp, untrained_nsp)


def test_every_existing_train_flag_still_parses_into_the_config() -> None:
    """The options are generated from the config fields now; every flag of the hand-written
    parser keeps its name and meaning."""
    from bertstudio.cli import build_parser
    from bertstudio.cli.train import config_from_args
    from bertstudio.core.training.data import Columns
    from bertstudio.core.training.options import options
    from bertstudio.core.training.scratch_config import ScratchConfig

    args = build_parser().parse_args([
        "train", "--model", "m", "--task", "text-classification", "--train", "t.csv", "--eval", "e.csv",
        "--eval-share", "0.2", "--output", "out", "--text-column", "a", "--pair-column", "b", "--label-column", "c",
        "--scheduler", "cosine", "--warmup-ratio", "0.1", "--warmup-steps", "3", "--max-steps", "9", "--lr", "1e-4",
        "--batch-size", "4", "--grad-accum", "2", "--weight-decay", "0.05", "--seed", "7", "--max-length", "64",
        "--eval-steps", "5", "--save-steps", "6", "--precision", "no", "--device", "cpu", "--resume", "--json"])
    config = config_from_args(args)
    assert config == TrainConfig(
        task="text-classification", train_file="t.csv", output_dir="out", model="m", eval_file="e.csv",
        eval_share=0.2, columns=Columns("a", "c", "b"), scheduler="cosine", warmup_steps=3, warmup_ratio=0.1,
        epochs=3.0, max_steps=9, batch_size=4, grad_accum=2, learning_rate=1e-4, weight_decay=0.05, seed=7,
        max_length=64, eval_steps=5, save_steps=6, precision="no", device="cpu", resume=True)
    scratch = config_from_args(build_parser().parse_args([
        "train", "--task", "pretraining", "--train", "c.txt", "--output", "o", "--from-scratch", "--epochs", "2",
        "--vocab-size", "500", "--layers", "3", "--heads", "4", "--hidden-size", "64", "--ffn-size", "128",
        "--max-length", "48"]))
    assert scratch.scratch == ScratchConfig(500, 3, 4, 64, 128, 48) and scratch.epochs == 2 and not scratch.model
    flags = {a for action in build_parser()._subparsers._group_actions[0].choices["train"]._actions  # noqa: SLF001
             for a in action.option_strings}
    for cls in (TrainConfig, ScratchConfig, Columns):
        assert {o.flag for _n, o, _d in options(cls)} <= flags
    with pytest.raises(SystemExit):  # --epochs and --max-steps stay mutually exclusive
        build_parser().parse_args(["train", "--task", "pretraining", "--train", "c", "--output", "o",
                                   "--epochs", "1", "--max-steps", "2"])


def test_training_keys_and_open_targets_come_from_the_trainables_and_specs(monkeypatch) -> None:  # noqa: ANN001
    """Issue 18: no list of app task keys in training. `--task` choices are the trainables' keys; a result
    opens in every spec whose model class is a head the saved model carries, so a new spec with such a
    head is offered without an edit to training."""
    from bertstudio.core.tasks import spec as spec_mod
    from bertstudio.core.training.config import TASKS
    from bertstudio.core.training.trainable import TRAINABLE

    assert TASKS == tuple(TRAINABLE)
    specs = spec_mod.all_specs()
    assert TRAINABLE["text-classification"].open_in == ("classification",)
    assert TRAINABLE["pretraining"].opens_in(nsp=True) == ("fill-mask", "nsp")
    assert TRAINABLE["pretraining"].opens_in(nsp=False) == ("fill-mask",)
    assert TRAINABLE["pretraining"].key == specs["pretraining"].key
    sentiment = replace(specs["classification"], key="sentiment", title="Sentiment")
    monkeypatch.setattr(spec_mod, "all_specs", lambda: {**specs, "sentiment": sentiment})
    assert TRAINABLE["text-classification"].open_in == ("classification", "sentiment")
    assert TRAINABLE["token-classification"].open_in == ("ner",)


def test_only_a_trainable_that_can_start_from_scratch_may_go_without_a_model(tmp_path: Path) -> None:
    from bertstudio.core.training.scratch_config import ScratchConfig

    base = TrainConfig(task="pretraining", train_file="c.txt", output_dir=str(tmp_path / "o"), scratch=ScratchConfig())
    base.validate()  # pre-training from scratch: no model needed
    with pytest.raises(InputError, match="No base model"):
        replace(base, task="text-classification").validate()

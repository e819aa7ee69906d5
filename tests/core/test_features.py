"""Inside the encoder (issue 42): SAE features, concept erasure and the tuned lens, on tiny random
checkpoints. Exactness against recomputations from the saved files and transformers' own hidden
states, LEACE against the concept-erasure package itself, and every bad input in one line."""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.features import edit, erase, sae, sae_folder, sae_train, states, tuned_lens
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from tests.conftest import run_cli
from tests.fixtures.checkpoints import WORDS

GOOD = ("good", "new", "big", "fast")
BAD = ("bad", "old", "small", "slow")


def _corpus(path: Path, lines: int = 40, seed: int = 0) -> Path:
    rng = random.Random(seed)
    path.write_text("\n".join(" ".join(rng.choice(WORDS[:60]) for _ in range(rng.randint(5, 9)))
                              for _ in range(lines)) + "\n", encoding="utf-8")
    return path


def _concepts(path: Path, rows: int = 60, classes: tuple[str, ...] = ("positive", "negative")) -> Path:
    rng = random.Random(1)
    out = ["text,concept"]
    for n in range(rows):
        label = classes[n % len(classes)]
        words = GOOD if label == classes[0] else BAD
        out.append(f"the {rng.choice(WORDS[40:70])} was {rng.choice(words)} and {rng.choice(words)},{label}")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny(checkpoint_factory: Callable[..., Path]) -> Path:
    return checkpoint_factory("bert", "MaskedLM")


@pytest.fixture(scope="module")
def trained(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("sae")
    corpus = _corpus(folder / "corpus.txt")
    loaded = load_model(LoadRequest(str(tiny), "fill-mask"))
    sae_train.train_features(loaded, corpus, 1, folder / "sae", sae.TrainOptions(epochs=3), TaskControl())
    return folder / "sae", corpus


def _hidden(source: Path, texts: list[str], layer: int) -> list[np.ndarray]:
    """hidden_states[layer] of each text, from transformers directly (no engine, no padding)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(source), AutoModel.from_pretrained(source).eval()
    with torch.inference_mode():
        return [model(**tokenizer(t, return_tensors="pt"), output_hidden_states=True).hidden_states[layer][0].numpy()
                for t in texts]


def _recomputed(folder: Path, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(f, x_hat) from the saved weights: f = TopK_k(ReLU((x - b_dec) W_enc + b_enc)), x_hat = f W_dec + b_dec."""
    from safetensors.numpy import load_file

    weights, info = load_file(folder / "sae.safetensors"), json.loads((folder / "sae.json").read_text())
    pre = np.maximum((x - weights["b_dec"]) @ weights["W_enc"] + weights["b_enc"], 0)
    f = np.zeros_like(pre)
    top = np.argsort(-pre, axis=1)[:, :info["k"]]
    np.put_along_axis(f, top, np.take_along_axis(pre, top, axis=1), axis=1)
    return f, f @ weights["W_dec"] + weights["b_dec"]


def test_encode_equals_a_recomputation_from_the_saved_weights(trained: tuple[Path, Path], tiny: Path,
                                                              capfd: pytest.CaptureFixture[str]) -> None:
    folder, _ = trained
    text = "the cat sat on the mat"
    out = run_cli(capfd, "features", "encode", "--sae", str(folder), text, "--json")
    assert out.returncode == 0, out.stderr
    tokens = json.loads(out.stdout)["tokens"]
    f, _ = _recomputed(folder, _hidden(tiny, [text], 1)[0])
    assert [t["token"] for t in tokens][0] == "[CLS]" and tokens[-1]["token"] == "[SEP]" and len(tokens) == len(f)
    for row, token in zip(f, tokens, strict=True):
        got = np.zeros_like(row)
        for item in token["features"]:
            got[item["feature"]] = item["value"]
        assert np.abs(got - row).max() < 1e-4
        assert len(token["features"]) <= json.loads((folder / "sae.json").read_text())["k"]


def test_held_out_fve_and_l0_match_a_recomputation(trained: tuple[Path, Path], tiny: Path) -> None:
    folder, corpus = trained
    info = json.loads((folder / "sae.json").read_text())
    assert info["activation"] == "topk" and (info["d"], info["m"], info["layer"]) == (32, 64, 1)
    texts = [line.strip() for line in corpus.read_text().splitlines() if line.strip()]
    _, held = states.split_texts(len(texts), info["held_out"], info["seed"])
    x = np.concatenate(_hidden(tiny, [texts[i] for i in held], 1))
    assert info["held_out_tokens"] == len(x)
    f, x_hat = _recomputed(folder, x)
    fve = 1 - ((x - x_hat) ** 2).sum() / ((x - x.mean(0)) ** 2).sum()
    assert abs(info["fraction_of_variance_explained"] - fve) < 1e-4
    assert abs(info["l0"] - (f > 0).sum(1).mean()) < 1e-4
    assert 0 <= info["dead_features"] <= info["m"]


def test_the_feature_card_lists_contexts_where_the_feature_fires(trained: tuple[Path, Path], tiny: Path) -> None:
    from bertstudio.core.features.card import feature_card, promoted_tokens

    found = sae_folder.load(trained[0])
    assert found.contexts is not None
    feature = int(np.argmax(found.contexts.frequency))
    card = feature_card(found, feature, load_model(LoadRequest(str(tiny), "fill-mask")))
    assert card.contexts and card.contexts[0].score == pytest.approx(card.largest)
    assert [n.score for n in card.contexts] == sorted((n.score for n in card.contexts), reverse=True)
    assert sum(card.histogram) == round(card.frequency * found.info.record["corpus_tokens"])
    assert len(card.promoted) == 10 and card.promoted == promoted_tokens(
        load_model(LoadRequest(str(tiny), "fill-mask")), found, feature)


@pytest.mark.parametrize("arch", ["bert", "albert", "modernbert", "longformer"])
def test_an_edit_changes_exactly_the_hidden_state_named(arch: str, checkpoint_factory: Callable[..., Path]) -> None:
    """editing(level) sees hidden_states[level] as transformers gives it, and what it returns is what
    the layers above read (shifting the last level shifts the MLM head's input). Longformer pads a text to
    its attention window inside the forward: the edit sees the padded rows, the real tokens first."""
    import torch

    loaded = load_model(LoadRequest(str(checkpoint_factory(arch, "MaskedLM")), "fill-mask"))
    inputs = loaded.tokenizer("the cat sat on the mat", return_tensors="pt")
    with torch.inference_mode():
        hidden = loaded.model(**inputs, output_hidden_states=True).hidden_states
        for level in range(len(hidden)):
            seen: list[torch.Tensor] = []

            def keep(x: torch.Tensor, into: list[torch.Tensor] = seen) -> torch.Tensor:
                into.append(x.clone())
                return x

            with edit.editing(loaded.model, level, keep):
                loaded.model(**inputs)
            width = hidden[level].shape[1]
            assert len(seen) == 1 and torch.allclose(seen[0][:, :width], hidden[level], atol=1e-5), (arch, level)
        with edit.editing(loaded.model, 1, lambda x: x * 0):
            changed = loaded.model(**inputs, output_hidden_states=True)
        assert not torch.allclose(changed.logits, loaded.model(**inputs).logits)


def test_erased_states_equal_leace_fitted_on_the_same_states(tmp_path: Path, tiny: Path) -> None:
    import torch
    from concept_erasure import LeaceEraser

    loaded = load_model(LoadRequest(str(tiny), "fill-mask"))
    concepts = erase.read_concepts(_concepts(tmp_path / "concepts.csv"))
    found = states.collect(loaded, concepts.texts, 2, TaskControl())
    labels = concepts.labels[found.text]
    ours = erase.erase_states(erase.fit_eraser(found.states, labels, 2), found.states)
    theirs = LeaceEraser.fit(torch.tensor(found.states, dtype=torch.float64),
                             torch.nn.functional.one_hot(torch.tensor(labels), 2).double())(
        torch.tensor(found.states, dtype=torch.float64)).numpy()
    assert np.abs(ours - theirs).max() < 1e-4


def test_the_probe_falls_to_the_majority_class(tmp_path: Path, tiny: Path) -> None:
    loaded = load_model(LoadRequest(str(tiny), "fill-mask"))
    result = erase.erase_concept(loaded, 1, _concepts(tmp_path / "concepts.csv", 80), TaskControl())
    assert result.probe_accuracy_before > result.majority + 0.05
    assert abs(result.probe_accuracy_after - result.majority) <= 0.02
    first = erase.erase_concept(loaded, 1, tmp_path / "concepts.csv", TaskControl(), positions="first")
    assert first.tokens == 80 and abs(first.probe_accuracy_after - first.majority) <= 0.02 + 1 / first.held_out_tokens


def test_erasing_in_the_forward_changes_the_task_metric(tmp_path: Path,
                                                        checkpoint_factory: Callable[..., Path]) -> None:
    from bertstudio.core.evaluate.readers import read_dataset

    source = checkpoint_factory("bert", "SequenceClassification")
    loaded = load_model(LoadRequest(str(source), "classification"))
    concepts = _concepts(tmp_path / "concepts.csv", 40, ("positive", "negative"))
    data = tmp_path / "data.csv"
    data.write_text(concepts.read_text().replace("text,concept", "text,label"), encoding="utf-8")
    result = erase.erase_concept(loaded, 2, concepts, TaskControl(), read_dataset("classification", data))
    assert result.comparison is not None and result.comparison.a.n == 40
    assert result.main_metric == "accuracy" and "metrics_after" in result.to_json()
    probabilities = (result.comparison.a.probabilities, result.comparison.b.probabilities)
    assert not np.allclose(*probabilities)


def test_the_tuned_lens_starts_as_the_logit_lens_and_beats_it(tmp_path: Path, tiny: Path) -> None:
    from bertstudio.core.tasks.fill_mask.layers import per_layer

    loaded = load_model(LoadRequest(str(tiny), "fill-mask"))
    lens = tuned_lens.train_lens(loaded, _corpus(tmp_path / "corpus.txt", 60), tmp_path / "lens", TaskControl(),
                                 epochs=20)
    assert lens.levels == 2 and lens.info["kl_tuned_lens"][-1] == 0
    assert sum(lens.info["kl_tuned_lens"]) < sum(lens.info["kl_logit_lens"])
    shown = per_layer(loaded, "the cat [MASK] on the mat", 3, lens=lens)
    assert len(shown.tuned) == len(shown.layers) == 3 and shown.tuned[-1] == shown.layers[-1]
    assert shown.kl[-1][0] == pytest.approx(0, abs=1e-6) and len(shown.tuned_kl) == 3
    zero = tuned_lens.TunedLens(lens.weight * 0, lens.bias * 0, lens.info, lens.path)
    plain = per_layer(loaded, "the cat [MASK] on the mat", 3, lens=zero)
    assert plain.tuned == plain.layers and np.allclose(plain.tuned_kl, plain.kl, atol=1e-6)


def _one_error(out: subprocess.CompletedProcess[str]) -> str:
    err = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert out.returncode == 1 and len(err) == 1, out.stderr
    return err[0]


def test_bad_input_is_one_line_each(tmp_path: Path, tiny: Path, trained: tuple[Path, Path],
                                    checkpoint_factory: Callable[..., Path], capfd: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path / "corpus.txt", 40)
    line = _one_error(run_cli(capfd, "features", "train", "--model", str(tiny), "--layer", "7", "--corpus",
                              str(corpus), "--output", str(tmp_path / "a")))
    assert "Layer 7 is out of range" in line and "0-2" in line
    line = _one_error(run_cli(capfd, "features", "train", "--model", str(tiny), "--layer", "1", "--corpus",
                              str(_corpus(tmp_path / "small.txt", 4)), "--output", str(tmp_path / "b"),
                              "--expansion", "8"))
    assert "too small for an expansion of 8" in line
    assert not (tmp_path / "b").exists()
    line = _one_error(run_cli(capfd, "erase", "--model", str(tiny), "--layer", "1", "--concept",
                              str(_concepts(tmp_path / "one.csv", 10, ("positive",)))))
    assert "one concept class ('positive')" in line
    other = checkpoint_factory("bert", "SequenceClassification")
    line = _one_error(run_cli(capfd, "features", "encode", "--sae", str(trained[0]), "--model", str(other), "the cat"))
    assert "was trained on" in line and str(other) in line
    line = _one_error(run_cli(capfd, "features", "encode", "--sae", str(trained[0]), "--layer", "2", "the cat"))
    assert "was trained on layer 1, not layer 2" in line
    line = _one_error(run_cli(capfd, "features", "encode", "--sae", str(tmp_path), "the cat"))
    assert "is not a SAE folder" in line or "not an SAE" in line


def test_the_output_folder_policy(tmp_path: Path, tiny: Path, trained: tuple[Path, Path],
                                  capfd: pytest.CaptureFixture[str]) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine", encoding="utf-8")
    args = ("features", "train", "--model", str(tiny), "--layer", "1", "--corpus", str(trained[1]), "--epochs", "1")
    assert "never replaced" in _one_error(run_cli(capfd, *args, "--output", str(theirs)))
    assert (theirs / "notes.txt").read_text(encoding="utf-8") == "mine"
    ours = tmp_path / "ours"
    assert run_cli(capfd, *args, "--output", str(ours)).returncode == 0
    assert "earlier BERT Studio run" in _one_error(run_cli(capfd, *args, "--output", str(ours)))
    out = run_cli(capfd, *args, "--output", str(ours), "--overwrite", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["epochs"] == 1
    assert sorted(p.name for p in ours.iterdir()) == ["bertstudio-run.json", "contexts.json", "contexts.safetensors",
                                                      "sae.json", "sae.safetensors"]
    assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob("*.lock"))

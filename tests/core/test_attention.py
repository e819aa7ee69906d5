"""Attention equals the model's own output_attentions; aggregates and views are exact."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.attention import compute
from bertstudio.core.tasks.attention.export import load_matrix_csv, load_npz, save
from bertstudio.core.tasks.attention.view import (
    ViewOptions,
    head_statistics,
    make_view,
    mean_over_heads,
    quadrant,
    rollout,
)
from tests.conftest import run_cli

ARCHS = ["bert", "roberta", "distilbert", "albert"]


def _load(folder):  # noqa: ANN001, ANN202
    return load_model(LoadRequest(str(folder), "attention", attn_implementation="eager"))


def _reference(folder, text, pair=None):  # noqa: ANN001, ANN202
    """transformers on its own: AutoModel with eager attention, output_attentions=True."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    encoding = tokenizer(text, pair, return_tensors="pt") if pair else tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        out = model(**encoding, output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0])
    return np.stack([a[0].numpy() for a in out.attentions]), tokens


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("pair", [None, "the dog ran fast"])
def test_equals_model_output(checkpoint_factory, arch: str, pair: str | None) -> None:
    folder = checkpoint_factory(arch, "Model")
    result = compute(_load(folder), "the cat sat on the mat .", pair)
    expected, tokens = _reference(folder, "the cat sat on the mat .", pair)
    config = _load(folder).model.config
    config_layers = config.n_layers if arch == "distilbert" else config.num_hidden_layers
    assert result.attentions.dtype == np.float32
    assert result.attentions.shape == (config_layers, result.heads, len(tokens), len(tokens))
    np.testing.assert_allclose(result.attentions, expected, rtol=0, atol=1e-6)
    assert list(result.tokens) == tokens
    np.testing.assert_allclose(result.attentions.sum(-1), 1.0, atol=1e-5)
    assert result.special[0] and result.special[-1] and result.cls_index == 0
    if pair:
        assert result.b_start is not None and result.segment_ids[result.b_start] == 1
        assert set(result.segment_ids[: result.b_start]) == {0} and set(result.segment_ids[result.b_start :]) == {1}
        assert len(result.sep_indices) >= 2
    else:
        assert result.b_start is None and set(result.segment_ids) == {0}


def test_real_minilm_equals_model_and_pair_segments(real_models) -> None:
    folder = real_models["all-minilm-l6-v2"]
    text, pair = "The cat sat on the mat.", "It was purring loudly."
    result = compute(_load(folder), text, pair)
    expected, tokens = _reference(folder, text, pair)
    assert result.attentions.shape == (6, 12, len(tokens), len(tokens))
    np.testing.assert_allclose(result.attentions, expected, atol=1e-6)
    assert list(result.tokens) == tokens and "[CLS]" == tokens[0]
    np.testing.assert_allclose(result.attentions.sum(-1), 1.0, atol=1e-5)
    # segment ids are what BERT got as token_type_ids
    from transformers import AutoTokenizer

    types = AutoTokenizer.from_pretrained(folder)(text, pair)["token_type_ids"]
    assert list(result.segment_ids) == types
    assert result.tokens[result.b_start - 1] == "[SEP]" and result.tokens[result.b_start] == "it"


def test_real_minilm_wordpieces(real_models) -> None:
    result = compute(_load(real_models["all-minilm-l6-v2"]), "Tokenization of unbelievable words")
    assert any(t.startswith("##") for t in result.tokens)


def test_rollout_hand_made() -> None:
    # one head, two layers, two tokens; every row attends fully to token 0
    a = np.array([[[[1.0, 0.0], [1.0, 0.0]]], [[[0.0, 1.0], [0.0, 1.0]]]], dtype=np.float32)
    r = rollout(a)
    # layer 0: (A+I)/2 = [[1,0],[.5,.5]]
    np.testing.assert_allclose(r[0], [[1.0, 0.0], [0.5, 0.5]])
    # layer 1: (A+I)/2 = [[.5,.5],[0,1]]; times R0 = [[.75,.25],[.5,.5]]
    np.testing.assert_allclose(r[1], [[0.75, 0.25], [0.5, 0.5]])
    np.testing.assert_allclose(r.sum(-1), 1.0)


def test_rollout_of_uniform_is_uniform_and_mean() -> None:
    a = np.full((3, 4, 5, 5), 0.2, dtype=np.float32)
    a[:, 1] = np.eye(5)  # one identity head: the mean is no longer uniform
    np.testing.assert_allclose(mean_over_heads(a)[0], 0.75 * 0.2 + 0.25 * np.eye(5), atol=1e-6)
    np.testing.assert_allclose(rollout(a).sum(-1), 1.0, atol=1e-5)


def test_quadrants_and_hidden_specials(checkpoint_factory) -> None:
    result = compute(_load(checkpoint_factory("bert", "Model")), "the cat sat", "a dog ran fast")
    tokens = list(result.tokens)  # [CLS] the cat sat [SEP] a dog ran fast [SEP]
    b = result.b_start
    assert tokens[b - 1] == "[SEP]" and b == 5
    full = result.attentions
    np.testing.assert_array_equal(quadrant(result, full, "A->A"), full[..., :b, :b])
    np.testing.assert_array_equal(quadrant(result, full, "A->B"), full[..., :b, b:])
    np.testing.assert_array_equal(quadrant(result, full, "B->A"), full[..., b:, :b])
    np.testing.assert_array_equal(quadrant(result, full, "B->B"), full[..., b:, b:])
    view = make_view(result, ViewOptions(hide_special=True, renormalise=True))
    words = [i for i, t in enumerate(tokens) if t not in ("[CLS]", "[SEP]")]
    assert list(view.rows) == words and list(view.cols) == words
    shown = view.apply(full)
    np.testing.assert_allclose(shown.sum(-1), 1.0, atol=1e-5)
    raw = make_view(result, ViewOptions(hide_special=True, renormalise=False)).apply(full)
    np.testing.assert_array_equal(raw, full[..., words, :][..., words])
    assert (raw.sum(-1) < 1.0 + 1e-6).all()
    single = compute(_load(checkpoint_factory("bert", "Model")), "the cat sat")
    with pytest.raises(InputError, match="pair"):
        make_view(single, ViewOptions(quadrant="A->B"))


def test_statistics(checkpoint_factory) -> None:
    result = compute(_load(checkpoint_factory("bert", "Model")), "the cat sat on the mat")
    stats = head_statistics(result)
    a = result.attentions.astype(np.float64)
    layer, head = 1, 0
    m = a[layer, head]
    assert stats.cls[layer, head] == pytest.approx(m[:, 0].mean(), abs=1e-6)
    assert stats.sep[layer, head] == pytest.approx(m[:, -1].mean(), abs=1e-6)
    assert stats.previous[layer, head] == pytest.approx(np.mean([m[i, i - 1] for i in range(1, len(m))]), abs=1e-6)
    assert stats.next[layer, head] == pytest.approx(np.mean([m[i, i + 1] for i in range(len(m) - 1)]), abs=1e-6)
    entropy = np.mean([-(row * np.log(row)).sum() for row in m])
    assert stats.entropy[layer, head] == pytest.approx(entropy, abs=1e-5)
    assert 0 <= stats.entropy.min() and stats.entropy.max() <= np.log(len(m)) + 1e-5
    assert len(stats.rows()) == result.layers * result.heads


def test_bad_input(checkpoint_factory) -> None:
    loaded = _load(checkpoint_factory("bert", "Model"))
    with pytest.raises(InputError, match="empty"):
        compute(loaded, "  ")
    result = compute(loaded, "the cat")
    with pytest.raises(InputError, match="Layer 9"):
        result.head(9, 0)
    with pytest.raises(InputError, match="Head 7"):
        result.head(0, 7)


def test_sdpa_model_is_refused(checkpoint_factory) -> None:
    from bertstudio.core.errors import MissingHeadError

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "Model")), "attention", attn_implementation="sdpa"))
    with pytest.raises(MissingHeadError, match="eager"):
        compute(loaded, "the cat")


def test_long_text_is_truncated(checkpoint_factory) -> None:
    loaded = _load(checkpoint_factory("bert", "Model"))
    result = compute(loaded, "the cat sat on the mat " * 30)
    assert result.length == loaded.info.max_length
    assert [n.level for n in result.notes] == ["warning"] and "reads at most" in result.notes[0].text
    pair = compute(loaded, "the cat sat on the mat " * 20, "a dog ran")
    assert pair.length == loaded.info.max_length and "cut" in pair.notes[0].text
    assert compute(loaded, "the cat").notes == ()


def test_export_round_trip(checkpoint_factory, tmp_path) -> None:
    result = compute(_load(checkpoint_factory("bert", "Model")), "the cat sat", "a dog")
    save(tmp_path / "all.npz", result)
    att, tokens = load_npz(tmp_path / "all.npz")
    np.testing.assert_array_equal(att, result.attentions)
    assert tokens == list(result.tokens)
    save(tmp_path / "one.npz", result, 1, 0)
    np.testing.assert_array_equal(load_npz(tmp_path / "one.npz")[0][0, 0], result.attentions[1, 0])
    save(tmp_path / "one.csv", result, 1, 0)
    matrix, queries, keys = load_matrix_csv(tmp_path / "one.csv")
    np.testing.assert_array_equal(matrix, result.attentions[1, 0])
    assert queries == keys == list(result.tokens)
    save(tmp_path / "all.csv", result)
    lines = (tmp_path / "all.csv").read_text().splitlines()
    assert len(lines) == 1 + result.attentions.size
    save(tmp_path / "one.json", result, 0, 1)
    data = json.loads((tmp_path / "one.json").read_text())
    np.testing.assert_array_equal(np.array(data["attention"], dtype=np.float32), result.attentions[0, 1])
    with pytest.raises(InputError, match=".npz"):
        save(tmp_path / "x.txt", result)


def _cli(capfd: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(capfd, "attention", *args)


def test_cli_npz_and_json(checkpoint_factory, tmp_path, capfd) -> None:
    folder = str(checkpoint_factory("bert", "Model"))
    out = tmp_path / "att.npz"
    done = _cli(capfd, "--model", folder, "the cat sat", "--pair", "a dog", "--out", str(out))
    assert done.returncode == 0, done.stderr
    att, tokens = load_npz(out)
    expected, ref_tokens = _reference(folder, "the cat sat", "a dog")
    np.testing.assert_allclose(att, expected, atol=1e-6)
    assert tokens == ref_tokens
    done = _cli(capfd, "--model", folder, "the cat", "--layer", "1", "--head", "0", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["tokens"] == ["[CLS]", "the", "cat", "[SEP]"] and np.array(data["attention"]).shape == (4, 4)
    done = _cli(capfd, "--model", folder, "the cat", "--layer", "5", "--head", "0", "--json")
    assert done.returncode == 1 and "Layer 5 does not exist" in done.stderr


# -- compare two models ------------------------------------------------------------------------------
def test_compare_two_models_same_tokenizer(checkpoint_factory) -> None:
    from bertstudio.core.tasks.attention import compare_attention

    folder_a, folder_b = checkpoint_factory("bert", "Model"), checkpoint_factory("bert", "MaskedLM")
    a = compute(_load(folder_a), "the cat sat on the mat .", "the dog ran fast")
    b = compute(_load(folder_b), "the cat sat on the mat .", "the dog ran fast")
    assert a.tokens == b.tokens
    comparison = compare_attention(a, b, str(folder_b))
    assert comparison.message == "" and comparison.diff is not None
    expected_b, _tokens = _reference(folder_b, "the cat sat on the mat .", "the dog ran fast")
    np.testing.assert_allclose(comparison.diff.difference, expected_b - a.attentions, atol=1e-6)
    np.testing.assert_allclose(comparison.diff.mean_abs, np.abs(expected_b - a.attentions).mean(axis=(2, 3)),
                               atol=1e-6)
    assert comparison.diff.mean_abs.shape == (a.layers, a.heads) and comparison.diff.mean_abs.max() > 0
    data = comparison.to_json(1, 0)
    assert data["differences"]["layer"] == 1
    np.testing.assert_allclose(np.array(data["differences"]["difference"]), expected_b[1, 0] - a.attentions[1, 0],
                               atol=1e-6)
    # a model compared with itself: zero everywhere
    same = compare_attention(a, a, str(folder_a))
    assert same.diff is not None and float(np.abs(same.diff.difference).max()) == 0.0


def test_compare_different_tokenizations_is_explained(checkpoint_factory) -> None:
    from bertstudio.core.tasks.attention import compare_attention

    a = compute(_load(checkpoint_factory("bert", "Model")), "the cat sat")
    b = compute(_load(checkpoint_factory("roberta", "Model")), "the cat sat")
    comparison = compare_attention(a, b, "roberta")
    assert comparison.diff is None
    assert "split the input differently" in comparison.message and "first difference at token 0" in comparison.message
    assert comparison.to_json()["differences"] is None


def test_cli_compare_json_and_npz(checkpoint_factory, tmp_path, capfd) -> None:
    folder_a, folder_b = str(checkpoint_factory("bert", "Model")), str(checkpoint_factory("bert", "MaskedLM"))
    done = _cli(capfd, "--model", folder_a, "the cat sat", "--compare", folder_b, "--layer", "1", "--head", "0",
                "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["model"] == folder_a and data["compare"]["model"] == folder_b
    att_a, tokens = _reference(folder_a, "the cat sat")
    att_b, _ = _reference(folder_b, "the cat sat")
    assert data["result"]["tokens"] == data["compare"]["result"]["tokens"] == tokens
    np.testing.assert_allclose(np.array(data["compare"]["result"]["attention"]), att_b[1, 0], atol=1e-6)
    differences = data["compare"]["differences"]
    np.testing.assert_allclose(np.array(differences["difference"]), att_b[1, 0] - att_a[1, 0], atol=1e-6)
    np.testing.assert_allclose(np.array(differences["mean_abs"]), np.abs(att_b - att_a).mean(axis=(2, 3)),
                               atol=1e-6)
    assert {"layer", "head", "mean_abs"} <= set(differences["most_changed"][0])
    out = tmp_path / "cmp.npz"
    done = _cli(capfd, "--model", folder_a, "the cat sat", "--compare", folder_b, "--out", str(out))
    assert done.returncode == 0, done.stderr
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["attentions"], att_a, atol=1e-6)
        np.testing.assert_allclose(saved["compare_attentions"], att_b, atol=1e-6)
        np.testing.assert_allclose(saved["differences"], att_b - att_a, atol=1e-6)
        assert saved["difference_mean_abs"].shape == att_a.shape[:2]
        assert [str(t) for t in saved["compare_tokens"]] == tokens
    # different tokenizers: a clear warning, and no differences
    roberta = str(checkpoint_factory("roberta", "Model"))
    done = _cli(capfd, "--model", folder_a, "the cat", "--compare", roberta, "--json")
    assert done.returncode == 0, done.stderr
    assert "split the input differently" in done.stderr
    assert json.loads(done.stdout)["compare"]["differences"] is None
    assert "split the input differently" in json.loads(done.stdout)["compare"]["message"]
    done = _cli(capfd, "--model", folder_a, "the cat", "--compare", folder_b, "--out", str(tmp_path / "x.csv"))
    assert done.returncode == 1 and "CSV" in done.stderr


def test_cli_out_checked_before_loading(tmp_path, capfd) -> None:
    """A bad --out fails at once with one line (exit 1), before any model is loaded: the model
    named here does not exist, so reaching the loader would give a different message."""
    missing = "no-such-model-folder-xyz"
    cases = {
        str(tmp_path / "missing" / "att.npz"): "does not exist",
        str(tmp_path): "folder",  # a folder given as the file
        str(tmp_path / "att.txt"): ".npz, .csv or .json",
        str(tmp_path / "a-file" / "att.npz"): "is a file, not a folder",
    }
    (tmp_path / "a-file").write_text("not a folder")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    import os

    if os.access(locked, os.W_OK):  # running as root: permissions are not enforced
        locked.chmod(0o700)
    else:
        cases[str(locked / "att.npz")] = "permission denied"
    try:
        for out, expected in cases.items():
            done = _cli(capfd, "--model", missing, "the cat", "--out", out)
            assert done.returncode == 1, (out, done.stderr)
            assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr
            assert missing not in done.stderr  # failed before loading
    finally:
        locked.chmod(0o700)
    done = _cli(capfd, "--model", missing, "the cat", "--layer", "1")
    assert done.returncode == 1 and "both --layer and --head" in done.stderr


def test_spec_runs_and_compares(checkpoint_factory) -> None:
    """The frame: run_spec gives the result with its notes; the spec's compare gives B - A."""
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.attention import AttentionInput
    from bertstudio.core.tasks.attention.spec import SPEC

    folder_a, folder_b = checkpoint_factory("bert", "Model"), checkpoint_factory("bert", "MaskedLM")
    request = LoadRequest(str(folder_a), "attention", attn_implementation=SPEC.attn_implementation)
    outcome = run_spec(SPEC, request, AttentionInput("the cat sat " * 60, "a dog"), TaskControl(), str(folder_b))
    assert any("cut" in note.text for note in outcome.notes)
    expected_b, _tokens = _reference(folder_b, "the cat sat", "a dog")
    assert outcome.result.attentions.shape[2] == _load(folder_a).info.max_length
    assert outcome.diff.diff is not None and outcome.diff.message == ""
    np.testing.assert_allclose(outcome.diff.diff.difference, outcome.second.attentions - outcome.result.attentions,
                               atol=1e-7)
    assert expected_b.shape[:2] == outcome.second.attentions.shape[:2]


def test_export_all_heads_streamed_equals_json_form_and_cancel_leaves_nothing(checkpoint_factory, tmp_path) -> None:
    from bertstudio.core.errors import TaskCancelled
    from bertstudio.core.progress import TaskControl

    result = compute(_load(checkpoint_factory("bert", "Model")), "the cat sat", "a dog")
    events = []
    save(tmp_path / "all.json", result, control=TaskControl(on_progress=events.append))
    assert json.loads((tmp_path / "all.json").read_text()) == json.loads(json.dumps(result.to_json()))
    assert events[-1].fraction == 1.0 and any("layer 1" in e.message for e in events)
    save(tmp_path / "all.csv", result, control=TaskControl())
    rows = (tmp_path / "all.csv").read_text().splitlines()
    assert len(rows) == 1 + result.attentions.size
    layer, head, q, _qt, k, _kt, weight = rows[-1].split(",")
    assert (int(layer), int(head), int(q), int(k)) == (result.layers - 1, result.heads - 1, result.length - 1,
                                                       result.length - 1)
    assert float(weight) == float(result.attentions[-1, -1, -1, -1])
    stop = TaskControl()
    stop.request_stop()
    for name in ("cancelled.csv", "cancelled.json"):
        with pytest.raises(TaskCancelled):
            save(tmp_path / name, result, control=stop)
        assert not (tmp_path / name).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all.csv", "all.json"]  # no partial left

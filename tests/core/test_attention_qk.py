"""Queries, keys, values and value-weighted norms equal the model's own projections, on all five
architectures: the reference is our own forward hooks on modules named by hand below, a plain
softmax, and a loop over heads and tokens from the projection weights."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from bertstudio.core.anatomy.modules import anatomy
from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.attention import compute
from bertstudio.core.tasks.attention.norms import head_norms, summed_norms, transformed_norms
from bertstudio.core.tasks.attention.qk import query_breakdown, softmax
from tests.conftest import run_cli

ARCHS = ["bert", "roberta", "distilbert", "albert", "electra"]
TEXT, PAIR = "the cat sat on the mat .", "the dog ran fast"


def _modules(model, arch: str):  # noqa: ANN001, ANN202 - written out by hand, not from the table
    """Per layer: (query, key, value, output projection) modules, ALBERT's shared layer repeated."""
    if arch == "distilbert":
        return [(b.attention.q_lin, b.attention.k_lin, b.attention.v_lin, b.attention.out_lin)
                for b in model.transformer.layer]
    if arch == "albert":
        shared = model.encoder.albert_layer_groups[0].albert_layers[0].attention
        return [(shared.query, shared.key, shared.value, shared.dense)] * model.config.num_hidden_layers
    return [(b.attention.self.query, b.attention.self.key, b.attention.self.value, b.attention.output.dense)
            for b in model.encoder.layer]


def _reference(folder, arch: str):  # noqa: ANN001, ANN202
    """transformers' AutoModel with our hooks: every call of q/k/v, in order, per head."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    modules = _modules(model, arch)
    heads = model.config.num_attention_heads
    calls: dict[str, list[np.ndarray]] = {"q": [], "k": [], "v": []}
    handles = []
    for name, index in (("q", 0), ("k", 1), ("v", 2)):
        for module in {id(m[index]): m[index] for m in modules}.values():  # ALBERT: one hook on the shared module
            handles.append(module.register_forward_hook(
                lambda _m, _i, out, n=name: calls[n].append(out[0].detach().numpy().copy())))
    with torch.no_grad():
        attentions = model(**tokenizer(TEXT, PAIR, return_tensors="pt"), output_attentions=True).attentions
    for handle in handles:
        handle.remove()

    def per_head(tensors: list[np.ndarray]) -> np.ndarray:  # layers x T x hidden -> layers x heads x T x d
        stacked = np.stack(tensors)
        layers, length, hidden = stacked.shape
        return stacked.reshape(layers, length, heads, hidden // heads).transpose(0, 2, 1, 3)

    weights = [m[3].weight.detach().numpy() for m in modules]
    return per_head(calls["q"]), per_head(calls["k"]), per_head(calls["v"]), weights, \
        np.stack([a[0].numpy() for a in attentions])


@pytest.mark.parametrize("arch", ARCHS)
def test_vectors_scores_and_norms_equal_the_projections(checkpoint_factory, arch: str) -> None:
    folder = checkpoint_factory(arch, "Model")
    result = compute(load_model(LoadRequest(str(folder), "attention", attn_implementation="eager")),
                     TEXT, PAIR, qk=True, norms=True, norm_sum=True)
    query, key, value, weights, attentions = _reference(folder, arch)
    vectors = result.vectors
    assert vectors is not None and vectors.query.shape == query.shape
    for mine, theirs in ((vectors.query, query), (vectors.key, key), (vectors.value, value)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-5)
    if arch == "albert":  # one shared module, called per layer: different inputs, different queries
        assert not np.allclose(vectors.query[0], vectors.query[1])
    layers, heads, length, dim = query.shape
    # softmax(scores) is the attention; the scores are q.k / sqrt(d) before the softmax
    for layer in range(layers):
        for head in range(heads):
            scores = vectors.scores(layer, head)
            np.testing.assert_allclose(scores, query[layer, head] @ key[layer, head].T / np.sqrt(dim), atol=1e-5)
            np.testing.assert_allclose(softmax(scores), attentions[layer, head], rtol=0, atol=1e-6)
    assert result.softmax_error is not None and result.softmax_error < 1e-5
    # norms by hand: f_h(x_j) = v_j^h W_O[:, h-slice]^T, ||alpha_ij f_h(x_j)||, and the sum over heads
    norms, summed = result.norms, result.summed_norms
    assert norms is not None and summed is not None and norms.shape == attentions.shape
    for layer in range(layers):
        w = weights[layer]
        f = np.stack([value[layer, h] @ w[:, h * dim:(h + 1) * dim].T for h in range(heads)])  # heads x T x out
        for i in range(length):
            for j in range(length):
                vectors_ij = attentions[layer, :, i, j, None] * f[:, j]
                np.testing.assert_allclose(norms[layer, :, i, j], np.linalg.norm(vectors_ij, axis=-1),
                                           rtol=1e-4, atol=1e-6)
                np.testing.assert_allclose(summed[layer, i, j], np.linalg.norm(vectors_ij.sum(0)), rtol=1e-4, atol=1e-6)
    assert result.value_gram is not None and result.value_norms is not None  # two ways to ||f_h(x_j)||, one answer
    np.testing.assert_allclose(transformed_norms(result.value_gram), result.value_norms, rtol=1e-4)
    np.testing.assert_array_equal(head_norms(result.attentions, result.value_norms), norms)
    np.testing.assert_array_equal(summed_norms(result.attentions, result.value_gram), summed)


def test_breakdown_is_one_row_of_the_head(checkpoint_factory) -> None:
    folder = checkpoint_factory("bert", "Model")
    result = compute(load_model(LoadRequest(str(folder), "attention", attn_implementation="eager")), TEXT, qk=True)
    assert result.vectors is not None and result.value_norms is None and result.norms is None
    parts = query_breakdown(result.vectors, 1, 0, 3)
    np.testing.assert_allclose(parts.products.sum(-1) / np.sqrt(parts.query.shape[0]), parts.scores, atol=1e-6)
    np.testing.assert_allclose(parts.weights, result.attentions[1, 0, 3], atol=1e-6)
    best = parts.top_dimensions(2, 2)
    assert best[0][1] >= best[1][1] and best[0][1] == pytest.approx(float(parts.products[2].max()))
    plain = compute(load_model(LoadRequest(str(folder), "attention", attn_implementation="eager")), TEXT)
    assert plain.vectors is None and plain.value_norms is None
    np.testing.assert_array_equal(plain.attentions, result.attentions)  # hooks change nothing


def test_unknown_architecture_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="gpt2"):
        anatomy(SimpleNamespace(config=SimpleNamespace(model_type="gpt2")))


def test_cli_qk_norms_and_npz(checkpoint_factory, tmp_path, capfd) -> None:  # noqa: ANN001
    folder = str(checkpoint_factory("distilbert", "Model"))
    out = tmp_path / "a.npz"
    done = run_cli(capfd, "attention", "--model", folder, TEXT, "--qk", "--norms", "--layer", "1", "--head", "0",
                   "--json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    result = compute(load_model(LoadRequest(folder, "attention", attn_implementation="eager")), TEXT,
                     qk=True, norms=True)
    qk = data["qk"]
    assert (qk["layer"], qk["head"]) == (1, 0)
    np.testing.assert_allclose(qk["query"], result.vectors.query[1, 0], atol=1e-6)
    np.testing.assert_allclose(qk["value"], result.vectors.value[1, 0], atol=1e-6)
    np.testing.assert_allclose(softmax(np.array(qk["scores"])), data["attention"], atol=1e-6)
    np.testing.assert_allclose(data["norms"], result.norms[1, 0], atol=1e-6)
    with np.load(out) as saved:  # the head's norms beside its attentions
        np.testing.assert_allclose(saved["norms"], result.norms[1:2, 0:1], atol=1e-6)
        np.testing.assert_allclose(saved["attentions"], result.attentions[1:2, 0:1], atol=1e-6)
    assert out.stat().st_size > 2 * result.norms[1, 0].nbytes  # plain np.savez unless --compress
    done = run_cli(capfd, "attention", "--model", folder, TEXT, "--qk", "--json")
    assert done.returncode == 1 and "--layer" in done.stderr and "Traceback" not in done.stderr


def test_norms_in_every_file_format(checkpoint_factory, tmp_path) -> None:
    """--out with --norms: .npz `norms`, the long .csv a `norm` column, .json `norms`; --compress compresses."""
    from bertstudio.core.tasks.attention.export import check_output, save

    folder = checkpoint_factory("electra", "Model")
    result = compute(load_model(LoadRequest(str(folder), "attention", attn_implementation="eager")), TEXT, norms=True)
    save(tmp_path / "plain.npz", result)
    save(tmp_path / "small.npz", result, compress=True)
    with np.load(tmp_path / "plain.npz") as plain, np.load(tmp_path / "small.npz") as small:
        np.testing.assert_array_equal(plain["norms"], result.norms)
        np.testing.assert_array_equal(small["norms"], plain["norms"])
    assert (tmp_path / "small.npz").stat().st_size < (tmp_path / "plain.npz").stat().st_size
    save(tmp_path / "all.json", result)
    np.testing.assert_allclose(json.loads((tmp_path / "all.json").read_text())["norms"], result.norms, atol=1e-7)
    save(tmp_path / "all.csv", result)
    rows = (tmp_path / "all.csv").read_text().splitlines()
    assert rows[0].endswith("weight,norm") and float(rows[2].split(",")[-1]) == pytest.approx(result.norms[0, 0, 0, 1])
    with pytest.raises(InputError, match="one matrix"):
        check_output(tmp_path / "head.csv", one_head_norms=True)

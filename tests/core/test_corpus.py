"""Corpus search (issue 21): the index holds the model's own hidden states, search equals brute-force
cosine, the cache is reused, invalidated and rebuilt when bad, and indexing stops on Cancel."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.corpus import cache
from bertstudio.core.corpus.query import (
    encoder_task,
    index_corpus,
    sentence_neighbours,
    text_query,
    token_neighbours,
)
from bertstudio.core.corpus.search import nearest_sentences
from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from tests.conftest import run_cli

ARCHS = ["bert", "roberta", "distilbert", "albert", "electra"]
LINES = ["the river bank was muddy", "", "she went to the bank for money", "play the piano",
         "a light bag", "turn on the light please now", "we play chess"]


def corpus(tmp_path: Path, lines: list[str] = LINES) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def loaded_for(folder: Path):  # noqa: ANN201 - LoadedModel
    return load_model(LoadRequest(str(folder), encoder_task()))


@pytest.mark.parametrize("arch", ARCHS)
def test_index_holds_the_models_hidden_states_and_search_is_brute_force(arch, checkpoint_factory, tmp_path):
    import torch

    loaded = loaded_for(checkpoint_factory(arch, "Model"))
    layer = 1
    index, _ = index_corpus(loaded, corpus(tmp_path), layer, TaskControl(), folder=tmp_path / "cache")
    texts = [t for t in LINES if t]
    assert index.lines == tuple(texts) and index.line_numbers.tolist() == [1, 3, 4, 5, 6, 7]
    rows, pooled = [], []
    for text in texts:  # one line at a time, no padding: the reference
        enc = loaded.tokenizer(text, return_tensors="pt", return_special_tokens_mask=True)
        special = enc.pop("special_tokens_mask")[0].bool()
        with torch.inference_mode():
            states = loaded.model(**enc, output_hidden_states=True).hidden_states[layer][0]
        rows.append(states[~special].numpy())
        pooled.append(states.mean(0).numpy())
    expected = np.concatenate(rows)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(index.vectors.astype(np.float32), expected, atol=2e-3)
    sent = np.stack(pooled) / np.linalg.norm(np.stack(pooled), axis=1, keepdims=True)
    np.testing.assert_allclose(index.sentences, sent, atol=1e-4)
    assert len(index.tokens) == expected.shape[0]
    assert not set(index.tokens) & set(loaded.tokenizer.all_special_tokens)

    query, tokens = text_query(loaded, "the bank", layer, 2)
    found = token_neighbours(index, query, 5)
    scores = index.vectors.astype(np.float32) @ (query / np.linalg.norm(query))
    brute = np.argsort(-scores, kind="stable")[:5]
    assert [n.score for n in found] == pytest.approx(scores[brute].tolist(), abs=1e-5)
    assert [(n.token_index, n.token) for n in found] == [
        (int(index.token_index[i]), index.tokens[i]) for i in brute]
    sentences = sentence_neighbours(index, text_query(loaded, "the bank", layer, None)[0], 3)
    assert sentences[0].token_index is None and len(sentences) == 3


def test_query_token_checks(checkpoint_factory):
    loaded = loaded_for(checkpoint_factory("bert", "Model"))
    with pytest.raises(InputError, match="special token"):
        text_query(loaded, "the bank", 1, 0)
    with pytest.raises(InputError, match="out of range"):
        text_query(loaded, "the bank", 1, 99)


def test_nearest_sentences_is_exact_cosine():
    rng = np.random.default_rng(0)
    vectors, query = rng.normal(size=(500, 16)), rng.normal(size=16)
    cos = vectors @ query / np.linalg.norm(vectors, axis=1) / np.linalg.norm(query)
    found = nearest_sentences(vectors, query, 10)
    assert [r for r, _ in found] == np.argsort(-cos)[:10].tolist()
    assert [s for _, s in found] == pytest.approx(np.sort(cos)[::-1][:10], abs=1e-5)
    assert nearest_sentences(np.zeros((0, 16)), query, 3) == []


def test_cache_reused_invalidated_and_rebuilt(checkpoint_factory, tmp_path):
    loaded = loaded_for(checkpoint_factory("bert", "Model"))
    folder, path = tmp_path / "cache", corpus(tmp_path)
    first, notes = index_corpus(loaded, path, 2, TaskControl(), folder=folder)
    assert notes == () and len(list(folder.glob("*.npz"))) == 1
    again, notes = index_corpus(loaded, path, 2, TaskControl(), folder=folder)
    assert "cache" in notes[0].text and again.tokens == first.tokens
    np.testing.assert_array_equal(again.vectors, first.vectors)
    corpus(tmp_path, [*LINES, "a new line"])  # the file changed: a new key, a new index
    changed, notes = index_corpus(loaded, path, 2, TaskControl(), folder=folder)
    assert notes == () and changed.lines[-1] == "a new line" and len(list(folder.glob("*.npz"))) == 2
    index_corpus(loaded, path, 1, TaskControl(), folder=folder)  # another layer: another key
    assert len(list(folder.glob("*.npz"))) == 3
    for bad in (b"not a zip", b""):
        for target in folder.glob("*.npz"):
            target.write_bytes(bad)
        rebuilt, notes = index_corpus(loaded, path, 2, TaskControl(), folder=folder)
        assert "rebuilt" in notes[0].text and rebuilt.tokens == changed.tokens
    target = max(folder.glob("*.npz"), key=lambda t: t.stat().st_mtime_ns)  # the one just rebuilt
    assert cache.load(target, target.stem).layer == 2
    with np.load(target) as data:  # a valid zip whose arrays lie: caught by the checks
        arrays = {k: data[k] for k in data.files}
    arrays["token_line"] = arrays["token_line"] + 1000
    np.savez(target, **arrays)
    _, notes = index_corpus(loaded, path, 2, TaskControl(), folder=folder)
    assert "rebuilt" in notes[0].text


def test_cancel_and_bad_files(checkpoint_factory, tmp_path):
    import os

    loaded = loaded_for(checkpoint_factory("bert", "Model"))
    control = TaskControl()
    control.request_stop()
    with pytest.raises(TaskCancelled):
        index_corpus(loaded, corpus(tmp_path), 1, control, folder=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for bad, match in ((fifo, "pipe"), (Path("/dev/zero"), "device"), (tmp_path, "folder")):
        with pytest.raises(InputError, match=match):
            index_corpus(loaded, bad, 1, TaskControl(), folder=tmp_path / "cache")
    binary = tmp_path / "bad.txt"
    binary.write_bytes(b"fine\n\xff\xfe bad\n")
    with pytest.raises(InputError, match="not UTF-8"):
        index_corpus(loaded, binary, 1, TaskControl(), folder=tmp_path / "cache")
    with pytest.raises(InputError, match="between 0 and"):
        index_corpus(loaded, corpus(tmp_path), 99, TaskControl(), folder=tmp_path / "cache")


def test_cli_neighbours(checkpoint_factory, tmp_path, capfd, monkeypatch):
    """One real process (faiss and torch imported by the command itself, the index cached where
    XDG_CACHE_HOME says); the other cases run the same main in this process."""
    folder = checkpoint_factory("bert", "Model")
    env_cache = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    args = ["neighbours", "--model", str(folder), "--corpus", str(corpus(tmp_path)), "--layer", "1"]
    out = subprocess.run([sys.executable, "-m", "bertstudio", *args, "--token", "2", "--k", "3", "the bank", "--json"],
                         capture_output=True, text=True, env=env_cache, timeout=120)
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)["neighbours"]
    assert len(items) == 3 and set(items[0]) == {"line", "token_index", "token", "score", "context"}
    assert list((tmp_path / "xdg" / "bertstudio" / "corpus").iterdir()), "no index cached under XDG_CACHE_HOME"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    out = run_cli(capfd, *args, "--sentences", "the bank", "--json")
    assert out.returncode == 0 and set(json.loads(out.stdout)["neighbours"][0]) == {"line", "score", "context"}
    for extra, message in ((["--token", "0"], "special token"), (["--token", "2", "--k", "5000"], "between 1"),
                           ([], "--token I")):
        out = run_cli(capfd, *args, *extra, "the bank")
        assert out.returncode == 1 and message in out.stderr and "Traceback" not in out.stderr


def clustered(rows: int, dim: int, centres: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around `centres` random centres (as token states cluster by word), float16."""
    rng = np.random.default_rng(seed)
    middle = rng.standard_normal((centres, dim), dtype=np.float32)
    data = middle[rng.integers(0, centres, rows)] + 0.7 * rng.standard_normal((rows, dim), dtype=np.float32)
    return (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float16)


def test_sentence_search_reads_unit_rows_without_copying_them(monkeypatch):
    from bertstudio.core.corpus import search

    rows = search.normalised(np.random.default_rng(1).normal(size=(300, 8)))
    plain = search.normalised

    def only_the_query(array):  # noqa: ANN001, ANN202
        assert np.asarray(array).reshape(-1, 8).shape[0] == 1, "the unit rows were normalised again"
        return plain(array)

    monkeypatch.setattr(search, "normalised", only_the_query)
    query = rows[7] * 3.0
    found = search.nearest_unit(rows, query, 4)
    assert found[0][0] == 7 and found[0][1] == pytest.approx(1.0, abs=1e-6)
    assert [r for r, _ in found] == np.argsort(-(rows @ rows[7]), kind="stable")[:4].tolist()


def test_large_token_index_uses_faiss_with_high_recall_and_exact_scores():
    from bertstudio.core.corpus.search import TokenSearch

    rows = clustered(60_000, 64, 600)
    exact = TokenSearch(rows, exact_max_rows=len(rows))
    approx = TokenSearch(rows, exact_max_rows=1_000)
    assert exact.exact and not approx.exact and approx.ivf.ntotal == len(rows)
    rng = np.random.default_rng(2)
    hits = 0
    for row in rng.integers(0, len(rows), 30):
        query = rows[row].astype(np.float32) + 0.05 * rng.standard_normal(64).astype(np.float32)
        truth, truth_scores = exact.search(query, 10)
        found, scores = approx.search(query, 10)
        hits += len(set(truth.tolist()) & set(found.tolist()))
        unit = query / np.linalg.norm(query)
        np.testing.assert_allclose(scores, rows[found].astype(np.float32) @ unit, atol=1e-6)  # exact cosines
        assert list(scores) == sorted(scores, reverse=True)
    assert hits / 300 >= 0.9


def test_faiss_and_torch_share_one_process(checkpoint_factory):
    """Both load an OpenMP runtime: a forward after a faiss search must still work and agree."""
    import torch

    from bertstudio.core.corpus.search import TokenSearch

    loaded = loaded_for(checkpoint_factory("bert", "Model"))
    enc = loaded.tokenizer("the bank", return_tensors="pt")
    with torch.inference_mode():
        before = loaded.model(**enc).last_hidden_state.clone()
    search = TokenSearch(clustered(5_000, 16, 50), exact_max_rows=100)
    search.search(np.ones(16, np.float32), 5)
    with torch.inference_mode():
        after = loaded.model(**enc).last_hidden_state
    torch.testing.assert_close(before, after)


def test_index_corpus_builds_the_faiss_search_above_the_threshold(checkpoint_factory, tmp_path, monkeypatch):
    from bertstudio.core.corpus import search

    loaded = loaded_for(checkpoint_factory("bert", "Model"))
    exact, notes = index_corpus(loaded, corpus(tmp_path), 1, TaskControl(), folder=tmp_path / "cache")
    assert exact.search.exact and notes == ()
    monkeypatch.setattr(search, "EXACT_MAX_ROWS", 4)
    monkeypatch.setattr(search, "CANDIDATES", 1_000)  # every row re-scored: results equal brute force
    approx, notes = index_corpus(loaded, corpus(tmp_path), 1, TaskControl(), folder=tmp_path / "cache")
    assert not approx.search.exact and "faiss" in notes[-1].text
    query, _ = text_query(loaded, "the bank", 1, 2)
    approx.search.ivf.nprobe = approx.search.ivf.nlist
    assert token_neighbours(approx, query, 5) == token_neighbours(exact, query, 5)


def test_the_faiss_lists_are_cached_beside_the_index_and_a_bad_file_is_recomputed(checkpoint_factory, tmp_path,
                                                                                     monkeypatch):
    """Clustering ~2M token vectors took ~50 s: a cached corpus files its rows straight into the stored
    lists; a damaged lists file is computed again, never trusted."""
    from bertstudio.core.corpus import cache, search

    loaded = loaded_for(checkpoint_factory("bert", "Model"))
    monkeypatch.setattr(search, "EXACT_MAX_ROWS", 4)
    folder = tmp_path / "cache"
    first, _ = index_corpus(loaded, corpus(tmp_path), 1, TaskControl(), folder=folder)
    [lists_file] = folder.glob("*.lists.npz")
    stored = cache.load_layout(lists_file, lists_file.name.split(".")[0], *first.vectors.shape)
    assert stored is not None and (stored.assignment == first.search.layout.assignment).all()

    def no_clustering(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("clustered again although the lists were cached")

    monkeypatch.setattr(search, "cluster", no_clustering)
    again, _ = index_corpus(loaded, corpus(tmp_path), 1, TaskControl(), folder=folder)
    query, _ = text_query(loaded, "the bank", 1, 2)
    for probe in (first, again):
        probe.search.ivf.nprobe = probe.search.ivf.nlist
    assert token_neighbours(again, query, 5) == token_neighbours(first, query, 5)

    lists_file.write_bytes(b"not an npz")
    monkeypatch.undo()
    monkeypatch.setattr(search, "EXACT_MAX_ROWS", 4)
    rebuilt, _ = index_corpus(loaded, corpus(tmp_path), 1, TaskControl(), folder=folder)
    assert not rebuilt.search.exact and cache.load_layout(lists_file, lists_file.name.split(".")[0],
                                                          *rebuilt.vectors.shape) is not None

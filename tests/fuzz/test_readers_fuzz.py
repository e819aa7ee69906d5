"""Issue 40: every file reader fuzzed (Hypothesis, derandomized) with mutations of a good file, random
JSON of the right vocabulary and raw bytes: each one returns, says "not one" (None), or raises the
app's own error (BertStudioError, BadCache for a cache, which is then rebuilt); never another
exception, a hang or an allocation past the memory limit."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import harness
from tests.fuzz.inputs import DATASETS, SUITES
from tests.fuzz.known import KNOWN_READERS

Reader = Callable[[Path], Any]


def _read_space(path: Path) -> Any:
    from bertstudio.core.training.config import TrainConfig
    from bertstudio.core.training.search_space import read_space

    return read_space(path, TrainConfig(task="text-classification", train_file="t.csv", output_dir="o"))


def _take_lock(folder: Path) -> None:
    """A lock file someone left where a run's lock goes: taken over, refused as busy, or refused."""
    from bertstudio.core.outputs import folder_lock

    with folder_lock(folder / "out", "train"):
        pass


def _readers() -> dict[str, tuple[str, Reader]]:
    """name -> (file name the reader looks for, reader of the folder holding it)."""
    from bertstudio.core import datafiles, model_folder, workspace_file
    from bertstudio.core.anatomy import checkpoint
    from bertstudio.core.corpus import cache
    from bertstudio.core.corpus.index import read_corpus
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.features import erase, sae_folder, tuned_lens
    from bertstudio.core.runs import curves, index
    from bertstudio.core.suites.suite import read_suite
    from bertstudio.core.tasks.ner.conll import read_conll
    from bertstudio.core.tasks.qa.squad import read_squad
    from bertstudio.core.tasks.qa.train_read import read_qa
    from bertstudio.core.training import log_history, saving
    from bertstudio.core.training.data import read_labelled

    return {
        "workspace": ("w.bertstudio", lambda d: workspace_file.validate(workspace_file.read(d / "w.bertstudio"))),
        "table": ("t.csv", lambda d: datafiles.read_table(d / "t.csv")),
        "lines": ("t.txt", lambda d: datafiles.read_lines(d / "t.txt")),
        "run record": ("r.json", lambda d: index.read_record(d / "r.json")),
        "runs folder": ("20261126-100000-000-aaaa0001.json", lambda d: index.list_runs(d)),
        "suite": ("s.json", lambda d: read_suite(d / "s.json")),
        "run marker": (saving.MARKER, lambda d: saving.read_marker(d)),
        "lock": ("out.lock", _take_lock),
        "trainer state": (log_history.STATE_FILE, lambda d: log_history.read_history(d)),
        "search space": ("space.json", lambda d: _read_space(d / "space.json")),
        "labelled": ("t.csv", lambda d: read_labelled(d / "t.csv")),
        "conll": ("t.conll", lambda d: read_conll(d / "t.conll")),
        "squad": ("q.json", lambda d: read_squad(d / "q.json")),
        "qa training": ("q.json", lambda d: read_qa(d / "q.json")),
        "eval classify": ("t.csv", lambda d: read_dataset("classify", d / "t.csv")),
        "eval similarity": ("t.csv", lambda d: read_dataset("similarity", d / "t.csv")),
        "eval choice": ("t.csv", lambda d: read_dataset("choice", d / "t.csv")),
        "eval qa": ("q.json", lambda d: read_dataset("qa", d / "q.json")),
        "corpus": ("c.txt", lambda d: read_corpus(d / "c.txt")),
        "concepts": ("t.csv", lambda d: erase.read_concepts(d / "t.csv")),
        "model config": ("config.json", lambda d: model_folder.read_config(d)),
        "curves": ("events.jsonl", lambda d: curves.read_curves(d / "events.jsonl")),
        "corpus cache": ("c.npz", lambda d: cache.load(d / "c.npz", "key")),
        "safetensors header": ("model.safetensors", lambda d: checkpoint.read_header(d / "model.safetensors")),
        "sae": ("sae.json", lambda d: sae_folder.load(d)),
        "tuned lens": ("lens.json", lambda d: tuned_lens.load(d)),
    }


SEEDS: dict[str, bytes] = {}


def _seed(name: str, file_name: str) -> bytes:
    """A good file for the reader, when there is one at hand; mutations start from it."""
    sources = {"suite": SUITES / "sentiment.json", "conll": DATASETS / "ner_train.conll",
               "squad": DATASETS / "qa_eval.json", "qa training": DATASETS / "qa_eval.json",
               "eval qa": DATASETS / "qa_eval.json", "eval similarity": DATASETS / "sts_eval.csv",
               "eval choice": DATASETS / "choice_eval.csv", "corpus": DATASETS / "pretraining_heldout.txt",
               "lines": DATASETS / "pretraining_heldout.txt"}
    if name in sources:
        return sources[name].read_bytes()[:3000]
    made = {
        "workspace": {"format": "bertstudio-workspace", "version": 1, "tabs": {}},
        "run record": {"id": "20261126-100000-000-aaaa0001", "status": "finished", "task": "text-classification",
                       "started": "2026-11-26T10:00:00", "duration_seconds": 5.0, "metrics": {"eval_f1": 0.5}},
        "run marker": {"app": "bertstudio", "kind": "train", "task": "classify", "created": "2026"},
        "lock": {"pid": 1, "host": "h", "task": "train", "started": "now", "since": 5},
        "trainer state": {"log_history": [{"step": 1, "loss": 0.5}, {"step": 2, "eval_loss": 0.4}]},
        "search space": {"learning_rate": {"low": 1e-5, "high": 1e-3, "log": True}, "metric": "eval_loss"},
        "model config": {"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2, "vocab_size": 99},
        "sae": {"d": 4, "m": 8, "model": "m", "layer": 1},
        "tuned lens": {"levels": 2, "d": 4, "model": "m"},
    }
    if name in made:
        return json.dumps(made[name]).encode()
    if name == "runs folder":
        return _seed("run record", file_name)
    if name == "safetensors header":
        import numpy as np
        from safetensors.numpy import save

        return save({"embeddings.weight": np.ones((3, 4), np.float32), "bias": np.zeros(4, np.float16)})
    if name == "curves":
        return b'{"step": 1, "loss": 0.5}\n{"step": 2, "eval_loss": 0.25}\n'
    return b"text,label\ngood film,positive\nbad film,negative\nfine,positive\n"


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in _keys(v))]
    if isinstance(value, list):
        return [k for v in value[:5] for k in _keys(v)]
    return []


def json_values(keys: list[str]) -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                       st.text(max_size=12), st.sampled_from([-1, 0, 10**9, "", "{x:>99999999}", "-1"]))
    names = st.sampled_from(keys) if keys else st.text(max_size=6)
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=5),
                        max_leaves=12)


@st.composite
def mutated_json(draw: st.DrawFn, value: Any, keys: list[str]) -> Any:
    """`value` with one subtree replaced by a random JSON value (often a wrong type or an out-of-bound number)."""
    if draw(st.integers(0, 3)) == 0 or not isinstance(value, dict | list) or not value:
        return draw(json_values(keys))
    if isinstance(value, dict):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: draw(mutated_json(value[key], keys))}
    at = draw(st.integers(0, len(value) - 1))
    return [*value[:at], draw(mutated_json(value[at], keys)), *value[at + 1:]]


@st.composite
def contents(draw: st.DrawFn, seed: bytes) -> bytes:
    try:
        parsed = json.loads(seed)
    except ValueError:
        parsed = None
    keys = sorted(set(_keys(parsed)))
    choices = [st.binary(max_size=300), st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
               st.tuples(st.integers(0, len(seed)), st.binary(max_size=8), st.integers(0, len(seed)))
               .map(lambda t: seed[: t[0]] + t[1] + seed[t[2]:])]
    if parsed is not None:
        choices.append(mutated_json(parsed, keys).map(lambda v: json.dumps(v).encode()))
        choices.append(mutated_json(parsed, keys).map(lambda v: json.dumps(v).encode()))
    return draw(st.one_of(*choices))


READERS = _readers()


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_fuzzed_file_is_read_or_refused_in_one_message(name: str, tmp_path: Path) -> None:
    from bertstudio.core.corpus.cache import BadCache
    from bertstudio.core.errors import BertStudioError

    file_name, reader = READERS[name]
    seed = _seed(name, file_name)

    @settings(max_examples=harness.examples(15), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(raw=contents(seed))
    def case(raw: bytes) -> None:
        folder = tmp_path / "case"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / file_name).write_bytes(raw)
        try:
            with harness.memory_limit(harness.CASE_MEMORY), harness.time_limit(harness.CASE_SECONDS):
                reader(folder)
        except (BertStudioError, BadCache):
            pass

    case()


def _special(kind: str, path: Path) -> None:
    """Put a special file where the reader looks: what a careless user or an attacker could leave there."""
    import os

    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge line":
        path.write_bytes(b"a" * (8 << 20) + b"\n")
    elif kind == "empty":
        path.write_bytes(b"")


SPECIAL_CASES = [
    pytest.param(name, kind, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_READERS[(name, kind)])]
                 if (name, kind) in KNOWN_READERS else [])
    for name in sorted(READERS) for kind in ("fifo", "zero", "loop", "folder", "huge line", "empty")
]


@pytest.mark.parametrize(("name", "kind"), SPECIAL_CASES)
def test_a_special_file_is_refused_in_one_message(name: str, kind: str, tmp_path: Path) -> None:
    from bertstudio.core.corpus.cache import BadCache
    from bertstudio.core.errors import BertStudioError

    file_name, reader = READERS[name]
    _special(kind, tmp_path / file_name)
    try:
        with harness.memory_limit(harness.CASE_MEMORY), harness.time_limit(10):
            reader(tmp_path)
    except (BertStudioError, BadCache):
        pass

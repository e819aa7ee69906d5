"""Hostile model folders: every bad config.json, special file and missing part is one message.

Each case is refused before transformers allocates anything: the model classes are replaced by
a trap, so a case that reaches them fails here (on the old code: a hang, a traceback, or a model
with a meaningless tokenizer).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from bertstudio.core import catalog
from bertstudio.core.catalog import list_local_models
from bertstudio.core.errors import ModelSourceError
from bertstudio.core.models import MODEL_CACHE, LoadRequest, load_uncached


class Allocated(AssertionError):
    """A model class was built although the folder should have been refused first."""


@pytest.fixture
def trap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to build a model (real or on the meta device) raises Allocated."""
    import transformers

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise Allocated("a model was built from a folder that should have been refused")

    for name in ("AutoModelForMaskedLM", "AutoModel", "AutoModelForPreTraining", "AutoModelForNextSentencePrediction",
                 "AutoModelForTokenClassification", "AutoModelForQuestionAnswering",
                 "AutoModelForSequenceClassification", "AutoModelForMultipleChoice"):
        monkeypatch.setattr(getattr(transformers, name), "from_pretrained", refuse)


def copy_checkpoint(source: Path, target: Path, *, tokenizer: bool = True) -> Path:
    target.mkdir(parents=True)
    for item in source.iterdir():
        if tokenizer or not item.name.startswith(("tokenizer", "vocab", "special_tokens", "merges")):
            shutil.copy(item, target / item.name)
    return target


def with_config(folder: Path, text: str) -> Path:
    (folder / "config.json").write_text(text)
    return folder


def bert_config(source: Path, **changes: object) -> str:
    config = json.loads((source / "config.json").read_text())
    config.update(changes)
    return json.dumps(config)


# (name, config.json text from the tiny BERT's, words the message must hold)
CASES = [
    ("million-layers", {"num_hidden_layers": 1_000_000}, ("num_hidden_layers", "256")),
    ("hidden-string", {"hidden_size": "768"}, ("hidden_size", "whole number")),
    ("heads-zero", {"num_attention_heads": 0}, ("num_attention_heads", "between")),
    ("vocab-negative", {"vocab_size": -5}, ("vocab_size", "between")),
    ("positions-float", {"max_position_embeddings": 1e12}, ("max_position_embeddings", "whole number")),
    ("layers-bool", {"num_hidden_layers": True}, ("num_hidden_layers", "whole number")),
    ("intermediate-huge", {"intermediate_size": 10**12}, ("intermediate_size", "between")),
    ("labels-million", {"num_labels": 1_000_000}, ("num_labels", "between")),
    ("too-many-parameters", {"num_hidden_layers": 256, "hidden_size": 65_536, "num_attention_heads": 64,
                             "intermediate_size": 65_536}, ("billion parameters",)),
    ("architectures-number", {"architectures": 5}, ("architectures",)),
    ("id2label-list", {"id2label": ["a", "b"]}, ("id2label",)),
    ("model-type-list", {"model_type": ["bert"]}, ("model_type",)),
]


@pytest.mark.parametrize(("name", "changes", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_config_field_is_refused_before_allocation(name, changes, words, trap, tmp_path, checkpoint_factory) -> None:  # noqa: ANN001, E501
    source = checkpoint_factory("bert")
    folder = copy_checkpoint(source, tmp_path / name)
    with_config(folder, bert_config(source, **changes))
    start = time.monotonic()
    with pytest.raises(ModelSourceError) as caught:
        load_uncached(LoadRequest(str(folder), "fill-mask"))
    assert all(word in caught.value.message for word in words), caught.value.message
    [listed] = list_local_models(tmp_path)  # the listing says the same, and never builds the model
    assert listed.tasks == () and all(word in listed.problem for word in words), listed.problem
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(("name", "text", "words"), [
    ("a-list", "[1, 2, 3]", ("not a JSON object",)),
    ("a-string", '"bert"', ("not a JSON object",)),
    ("not-json", "{model_type: bert", ("not valid JSON",)),
    ("deep", '{"a": ' * 100_000 + "1" + "}" * 100_000, ("nested",)),
    ("deep-but-parses", '{"model_type": "bert", "x": ' + "[" * 200 + "]" * 200 + "}", ("nested more than",)),
    ("latin-1", '{"model_type": "b\xe9rt"}', ("not UTF-8",)),
])
def test_bad_config_file_is_one_message(name, text, words, trap, tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    folder = copy_checkpoint(checkpoint_factory("bert"), tmp_path / name)
    (folder / "config.json").write_bytes(text.encode("latin-1" if name == "latin-1" else "utf-8"))
    with pytest.raises(ModelSourceError) as caught:
        load_uncached(LoadRequest(str(folder), "fill-mask"))
    assert all(word in caught.value.message for word in words), caught.value.message
    [listed] = list_local_models(tmp_path)
    assert listed.tasks == () and all(word in listed.problem for word in words), listed.problem


def _unblock_later(fifo: Path, after_s: float = 8.0) -> None:
    """If the code under test blocks reading the FIFO (the old behaviour), end it with EOF."""
    def writer() -> None:
        time.sleep(after_s)
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # nobody is reading: nothing blocked
            return
        os.close(fd)

    threading.Thread(target=writer, daemon=True).start()


@pytest.mark.parametrize("special", ["config.json", "tokenizer.json", "model.safetensors"])
def test_a_fifo_in_the_folder_is_refused_at_once(special, trap, tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    folder = copy_checkpoint(checkpoint_factory("bert"), tmp_path / "fifo")
    (folder / special).unlink()
    os.mkfifo(folder / special)
    _unblock_later(folder / special)
    start = time.monotonic()
    with pytest.raises(ModelSourceError, match="pipe") as caught:
        load_uncached(LoadRequest(str(folder), "fill-mask"))
    assert special in caught.value.message
    [listed] = list_local_models(tmp_path)
    assert listed.tasks == () and "pipe" in listed.problem
    assert time.monotonic() - start < 5


def test_a_device_or_huge_file_as_config_is_refused(trap, tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    zero = copy_checkpoint(checkpoint_factory("bert"), tmp_path / "zero")
    (zero / "config.json").unlink()
    (zero / "config.json").symlink_to("/dev/zero")
    with pytest.raises(ModelSourceError, match="device"):
        load_uncached(LoadRequest(str(zero), "fill-mask"))
    huge = copy_checkpoint(checkpoint_factory("bert"), tmp_path / "huge")
    with open(huge / "config.json", "r+b") as stream:
        stream.truncate(64 * 2**20)  # sparse: 64 MiB without writing them
    with pytest.raises(ModelSourceError, match="MiB"):
        load_uncached(LoadRequest(str(huge), "fill-mask"))


def test_a_folder_without_tokenizer_files_is_refused(tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    folder = copy_checkpoint(checkpoint_factory("bert"), tmp_path / "no-tokenizer", tokenizer=False)
    with pytest.raises(ModelSourceError) as caught:
        load_uncached(LoadRequest(str(folder), "fill-mask"))
    assert "no tokenizer files" in caught.value.message and "[UNK]" in caught.value.message
    assert "vocab.txt" in caught.value.hint
    [listed] = list_local_models(tmp_path)
    assert listed.tasks == () and "no tokenizer files" in listed.problem


def test_a_tokenizer_with_only_special_tokens_is_refused(tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    folder = copy_checkpoint(checkpoint_factory("bert"), tmp_path / "empty-vocab", tokenizer=False)
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    with pytest.raises(ModelSourceError, match="no vocabulary"):
        load_uncached(LoadRequest(str(folder), "fill-mask"))


def test_auto_map_on_a_known_type_is_refused_and_its_code_never_runs(tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    source = checkpoint_factory("bert")
    folder = copy_checkpoint(source, tmp_path / "custom-bert")
    with_config(folder, bert_config(source, auto_map={"AutoModelForMaskedLM": "modeling_custom.CustomBert"}))
    (folder / "modeling_custom.py").write_text("raise SystemExit('custom code ran')\n")
    MODEL_CACHE.clear()
    with pytest.raises(ModelSourceError) as caught:
        load_uncached(LoadRequest(str(folder), "fill-mask"))
    assert "needs custom code" in caught.value.message and "auto_map" in caught.value.message
    [listed] = list_local_models(tmp_path)
    assert listed.tasks == () and "needs custom code" in listed.problem


def test_the_listing_stops_at_its_bound_and_says_so(monkeypatch, tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    monkeypatch.setattr(catalog, "MAX_MODEL_FOLDERS", 3)
    for index in range(6):
        (tmp_path / f"m{index}").mkdir()
        (tmp_path / f"m{index}" / "config.json").write_text('{"model_type": "alien-net"}')
    listing = list_local_models(tmp_path)
    assert [m.name for m in listing] == ["m0", "m1", "m2"]
    assert "first 3" in listing.note


def test_an_unreadable_subfolder_does_not_hide_the_others(monkeypatch, tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    (tmp_path / "org").mkdir()
    (tmp_path / "bert").symlink_to(checkpoint_factory("bert"), target_is_directory=True)
    real_iterdir = Path.iterdir

    def iterdir(self: Path):  # noqa: ANN202 - as chmod 0 does, also for root (who reads every folder)
        if self.name == "org":
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert [m.name for m in list_local_models(tmp_path)] == ["bert"]


def test_good_folders_still_load_and_list(tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    for arch in ("bert", "roberta", "albert"):
        (tmp_path / arch).symlink_to(checkpoint_factory(arch), target_is_directory=True)
    listed = {m.name: m for m in list_local_models(tmp_path)}
    assert all("fill-mask" in listed[arch].tasks and not listed[arch].problem for arch in listed)
    loaded = load_uncached(LoadRequest(str(tmp_path / "albert"), "fill-mask"))
    assert loaded.info.vocab_size > 100


def test_cli_lists_bad_folders_and_refuses_to_load_them(trap, tmp_path, checkpoint_factory, capsys) -> None:  # noqa: ANN001
    from bertstudio.cli import main

    source = checkpoint_factory("bert")
    huge = with_config(copy_checkpoint(source, tmp_path / "models" / "huge"),
                       bert_config(source, num_hidden_layers=10**6))
    copy_checkpoint(source, tmp_path / "models" / "bare", tokenizer=False)
    assert main(["models", "--models-dir", str(tmp_path / "models")]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "num_hidden_layers" in rows["huge"] and "no tokenizer files" in rows["bare"]
    assert main(["fill-mask", "--model", str(huge), "a [MASK] ."]) == 1
    err = capsys.readouterr().err
    assert "num_hidden_layers" in err and "256" in err and "Traceback" not in err


def test_a_tokenizer_larger_than_the_embedding_is_refused_before_the_weights(trap, tmp_path, checkpoint_factory,
                                                                              capsys) -> None:  # noqa: ANN001
    """Issue 32 item 11: config.json vocab_size 5 under a 171-token tokenizer passed every check;
    fill-mask and counterfactual then ended in 'internal error: IndexError'."""
    from transformers import AutoTokenizer

    from bertstudio.cli import main

    source = checkpoint_factory("bert")
    tokens = len(AutoTokenizer.from_pretrained(source))
    folder = with_config(copy_checkpoint(source, tmp_path / "small-embedding"), bert_config(source, vocab_size=5))
    with pytest.raises(ModelSourceError) as caught:
        load_uncached(LoadRequest(str(folder), "fill-mask"))
    assert f"{tokens:,} tokens" in caught.value.message and "only 5 rows" in caught.value.message
    assert "vocab_size" in caught.value.message
    assert main(["fill-mask", "--model", str(folder), "a [MASK] ."]) == 1
    err = capsys.readouterr().err
    assert "only 5 rows" in err and "internal error" not in err and "Traceback" not in err


def test_a_model_with_one_segment_row_reads_a_pair_as_one_segment(tmp_path, checkpoint_factory, capsys) -> None:  # noqa: ANN001
    """Found with item 11: a BERT saved with type_vocab_size 1 (one segment row) and a BERT tokenizer
    ended every sentence pair in 'internal error: IndexError' (sentence B's segment id 1 has no row)."""
    import torch
    from transformers import BertModel

    from bertstudio.cli import main

    source = checkpoint_factory("bert", "Model")
    model = BertModel.from_pretrained(source)
    model.embeddings.token_type_embeddings = torch.nn.Embedding(1, model.config.hidden_size)
    model.config.type_vocab_size = 1
    folder = tmp_path / "one-segment"
    model.save_pretrained(folder)
    for item in source.iterdir():
        if item.name.startswith(("tokenizer", "vocab", "special_tokens")):
            shutil.copy(item, folder / item.name)
    assert main(["attention", "--model", str(folder), "the cat", "--pair", "a dog", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["segment_ids"][-1] == 1  # the pair is still told apart for the view
    none = copy_checkpoint(source, tmp_path / "no-segment")
    with_config(none, bert_config(source, type_vocab_size=0))
    with pytest.raises(ModelSourceError, match="type_vocab_size = 0"):
        load_uncached(LoadRequest(str(none), "attention"))


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer_config.json"])
def test_a_huge_tokenizer_file_is_refused_before_it_is_read(name, trap, tmp_path, checkpoint_factory) -> None:  # noqa: ANN001
    """Found with item 11: a tokenizer file is read whole (a sparse 8 GiB tokenizer.json is 8 GiB of memory);
    its size is checked with the folder, before transformers reads a byte."""
    from bertstudio.core.model_folder import MAX_TOKENIZER_BYTES

    folder = copy_checkpoint(checkpoint_factory("bert"), tmp_path / "huge-tokenizer")
    with open(folder / name, "r+b") as stream:
        stream.truncate(MAX_TOKENIZER_BYTES + 1)  # sparse: nothing written
    with pytest.raises(ModelSourceError) as caught:
        load_uncached(LoadRequest(str(folder), "fill-mask"))
    assert name in caught.value.message and "MiB" in caught.value.message
    [listed] = list_local_models(tmp_path)
    assert listed.tasks == () and name in listed.problem

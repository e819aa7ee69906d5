"""The files a fuzzed command may be handed: good ones (tiny random models, small data files, suites,
run records) and every kind of bad one (special files, broken model folders, broken data), built once
in one folder whose every byte is snapshotted before and after each case."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ROOT / "resources" / "datasets"
SUITES = ROOT / "resources" / "suites"

# A line longer than any one field we accept in memory comfortably, short enough to build in a blink.
HUGE_LINE_CHARS = 4 * 1024 * 1024


@dataclass
class Inputs:
    """Paths by role: what a model, a data, a suite... argument may be given."""

    root: Path
    models: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    suites: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    specials: list[str] = field(default_factory=list)
    runs: Path | None = None
    sae: Path | None = None

    @property
    def inputs(self) -> Path:
        return self.root / "in"


def _head_lines(source: Path, target: Path, lines: int) -> str:
    with source.open(encoding="utf-8") as text:
        target.write_text("".join(next(text) for _ in range(lines)), encoding="utf-8")
    return str(target)


def _models(folder: Path) -> list[str]:
    from tests.fixtures.checkpoints import build_checkpoint

    paths = [str(build_checkpoint(folder / f"bert-{head.lower()}", "bert", head))
             for head in ("MaskedLM", "SequenceClassification", "TokenClassification", "QuestionAnswering")]
    broken_config = folder / "broken-config"
    shutil.copytree(paths[0], broken_config)
    (broken_config / "config.json").write_text('{"model_type": "bert", "num_hidden_layers": ', encoding="utf-8")
    huge_config = folder / "huge-config"
    shutil.copytree(paths[0], huge_config)
    config = json.loads((huge_config / "config.json").read_text(encoding="utf-8"))
    config.update(num_hidden_layers=10**9, hidden_size=10**9)
    (huge_config / "config.json").write_text(json.dumps(config), encoding="utf-8")
    truncated = folder / "truncated-weights"
    shutil.copytree(paths[1], truncated)
    weights = truncated / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    lying_header = folder / "lying-header"
    shutil.copytree(paths[0], lying_header)
    (lying_header / "model.safetensors").write_bytes((10**12).to_bytes(8, "little") + b"{}")
    return [*paths, str(broken_config), str(huge_config), str(truncated), str(lying_header)]


def _data(folder: Path) -> list[str]:
    paths = [_head_lines(DATASETS / name, folder / name, lines) for name, lines in (
        ("reviews_train.csv", 25), ("sts_train.csv", 13), ("choice_train.csv", 9), ("ner_train.conll", 60),
        ("pretraining_corpus.txt", 12))]
    squad = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": "Anna lives in Paris.", "qas": [
        {"id": "q1", "question": "Where does Anna live?", "answers": [{"text": "Paris", "answer_start": 14}]}]}]}]}
    writes = {
        "qa.json": json.dumps(squad),
        "rows.jsonl": "".join(json.dumps({"text": f"row {i} was fine", "label": "positive" if i % 2 else "negative"})
                              + "\n" for i in range(10)),
        "rows.json": json.dumps([{"text": "good", "label": "positive"}, {"text": "bad", "label": "negative"}] * 4),
        "quotes.csv": 'text,label\n"never closed,positive\nok,negative\n',
        "ragged.csv": "text,label\na\nb,c,d,e\n,\n",
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "nan.jsonl": '{"text": "x", "label": NaN}\n{"text": 1e999, "label": "positive"}\n',
        "dupkeys.json": '[{"text": "a", "text": "b", "label": "positive"}]',
        "broken.conll": "word\nword B-PER extra columns\n\n\n-DOCSTART- -X- O O\n",
        "concept.csv": "text,label\n" + "".join(f"text number {i},{'a' if i % 2 else 'b'}\n" for i in range(12)),
    }
    for name, text in writes.items():
        (folder / name).write_text(text, encoding="utf-8")
        paths.append(str(folder / name))
    (folder / "latin1.csv").write_bytes("text,label\ncaf\xe9,positive\n".encode("latin-1"))
    paths.append(str(folder / "latin1.csv"))
    return paths


def _suites(folder: Path) -> list[str]:
    paths = []
    for name in ("sentiment.json", "ner.json", "qa.json"):
        shutil.copy(SUITES / name, folder / name)
        paths.append(str(folder / name))
    broken = {
        "missing-tests.json": {"task": "classify"},
        "unknown-task.json": {"task": "dance", "tests": []},
        "bad-type.json": {"task": "classify", "tests": [{"name": "t", "type": "XYZ", "template": "a {x}",
                                                         "fill": {"x": ["b"]}, "expect": "positive"}]},
        "unfilled.json": {"task": "classify", "tests": [{"name": "t", "type": "MFT", "template": "a {y}",
                                                         "fill": {"x": ["b"]}, "expect": "positive"}]},
        "nested-slot.json": {"task": "classify", "tests": [{"name": "t", "type": "MFT", "template": "the {x:{x}}",
                                                           "fill": {"x": ["cat"]}, "expect": "positive"}]},
        "format-spec.json": {"task": "classify", "tests": [{"name": "t", "type": "MFT", "template": "the {x:>2000}",
                                                           "fill": {"x": ["cat"]}, "expect": "positive"}]},
        "mask.json": {"task": "classify", "tests": [{"name": "t", "type": "INV", "template": "the {mask} was {x}",
                                                     "fill": {"x": ["good", "bad"]}}]},
    }
    for name, suite in broken.items():
        (folder / name).write_text(json.dumps(suite), encoding="utf-8")
        paths.append(str(folder / name))
    (folder / "not-json.json").write_text("{'task': 'classify'", encoding="utf-8")
    paths.append(str(folder / "not-json.json"))
    return paths


def _runs(folder: Path) -> Path:
    """A runs folder: one good record, and broken ones (cut short, not an object, an infinite number)."""
    from bertstudio.core.runs import index

    record = index.RunRecord(id="20261126-100000-aaaa0001", status="finished", task="text-classification",
                             started="2026-11-26T10:00:00", duration_seconds=5.0, device="cpu", output_dir="/x",
                             model="m", data="", metrics={"eval_accuracy": 0.5})
    good = index.write_record(record, folder)
    data = json.loads(good.read_text(encoding="utf-8"))
    (folder / "20261126-110000-aaaa0002.json").write_text(good.read_text(encoding="utf-8")[:40], encoding="utf-8")
    (folder / "20261126-120000-aaaa0003.json").write_text("[1, 2]", encoding="utf-8")
    infinite = {**data, "id": "20261126-130000-aaaa0004", "duration_seconds": float("inf")}
    # json.dumps writes the infinity as Infinity, which is not JSON
    (folder / f"{infinite['id']}.json").write_text(json.dumps(infinite), encoding="utf-8")
    return folder


def _specials(folder: Path) -> list[str]:
    """Every file a careless user or an attacker could name where we expect a plain file."""
    fifo, loop, empty, huge = folder / "fifo", folder / "loop", folder / "empty.txt", folder / "huge-line.txt"
    os.mkfifo(fifo)
    loop.symlink_to(loop)
    empty.write_bytes(b"")
    huge.write_text("text,label\n" + "w" * HUGE_LINE_CHARS + ",positive\n", encoding="utf-8")
    binary = folder / "binary.csv"
    binary.write_bytes(b"text,label\n\xff\xfe\x00\x81 bytes\x00,positive\n")
    zero_link = folder / "zero-link.csv"
    zero_link.symlink_to("/dev/zero")
    (folder / "a-folder").mkdir()
    (folder / "a-folder" / "inside.txt").write_text("x", encoding="utf-8")
    return ["/dev/zero", "/dev/null", str(fifo), str(loop), str(empty), str(huge), str(binary), str(zero_link),
            str(folder / "a-folder"), str(folder / "missing.csv"), ""]


def _sae(found: Inputs) -> Path:
    """A trained sparse autoencoder (one epoch on a tiny model), for `features encode/show`."""
    from bertstudio.cli import main

    folder = found.inputs / "sae"
    corpus = next(path for path in found.data if path.endswith("pretraining_corpus.txt"))
    code = main(["features", "train", "--model", found.models[0], "--layer", "1", "--corpus", corpus,
                 "--output", str(folder), "--epochs", "1"])
    assert code == 0, "the SAE the fuzzer reads could not be trained"
    return folder


def build(root: Path) -> Inputs:
    """Everything under root/in; outputs of the cases go under root/out."""
    found = Inputs(root)
    for sub in ("models", "data", "suites", "special"):
        (found.inputs / sub).mkdir(parents=True)
    (root / "out").mkdir()
    found.models = _models(found.inputs / "models")
    found.data = _data(found.inputs / "data")
    found.suites = _suites(found.inputs / "suites")
    found.specials = _specials(found.inputs / "special")
    found.runs = _runs(found.inputs / "runs")
    found.sae = _sae(found)
    found.folders = [str(found.inputs / "models"), str(found.runs), str(found.inputs / "data")]
    return found

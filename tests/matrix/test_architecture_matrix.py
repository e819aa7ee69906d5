"""Every architecture x every command (issue 38): each cell runs and equals its reference, or is
refused in one line naming the real reason, exactly as tests/matrix/cases.py (the README's table) says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bertstudio.cli import main
from tests.fixtures.checkpoints import ALL_ARCHITECTURES, make_tokenizer
from tests.matrix.cases import COMMANDS, COVERED, METHODS, REFUSED, covered_by, table

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("matrix-data")
    data = folder / "reviews.csv"
    rows = [f"the cat sat on the mat {i} .,{'positive' if i % 2 else 'negative'}" for i in range(12)]
    data.write_text("text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    suite = folder / "suite.json"
    suite.write_text(json.dumps({"name": "s", "task": "classify", "tests": [
        {"name": "t", "type": "MFT", "template": "the {x} sat", "fill": {"x": ["cat", "dog"]}, "expect": "positive"}]}))
    corpus = folder / "corpus.txt"  # a few sentences: the index is built, searched and read back
    corpus.write_text("a bat flew out of the cave .\nhe swung the bat hard .\nthe cat sat on the mat .\n",
                      encoding="utf-8")
    return {"data": str(data), "suite": str(suite), "corpus": str(corpus)}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _json(out: str) -> Any:
    lines = [line for line in out.splitlines() if line.strip()]
    try:
        return json.loads(out)
    except json.JSONDecodeError:  # train --json: one object per event
        return [json.loads(line) for line in lines]


def _argv(arch: str, command: str, folder: str, out: Path, files: dict[str, str], method: str = "") -> list[str]:
    mask = make_tokenizer(arch).mask_token
    return [a.replace("{M}", folder).replace("{O}", str(out)).replace("{mask}", mask).replace("{method}", method)
            .replace("{data}", files["data"]).replace("{suite}", files["suite"]).replace("{corpus}", files["corpus"])
            for a in COMMANDS[command][1]]


def _folder(checkpoint_factory: Any, arch: str, head: str) -> str:
    try:
        return str(checkpoint_factory(arch, head))
    except ValueError:  # transformers has no such head: the command is refused on the masked-LM checkpoint
        return str(checkpoint_factory(arch, "MaskedLM"))


CELLS = [(arch, command) for arch in ALL_ARCHITECTURES for command in COMMANDS if not covered_by(arch, command)]


@pytest.mark.parametrize(("arch", "command"), CELLS)
def test_cell(arch: str, command: str, checkpoint_factory: Any, files: dict[str, str], tmp_path: Path,
              capsys: pytest.CaptureFixture[str]) -> None:
    folder = _folder(checkpoint_factory, arch, COMMANDS[command][0])
    for method in METHODS if "{method}" in COMMANDS[command][1] else ("",):
        code, out, err = _run(_argv(arch, command, folder, tmp_path, files, method), capsys)
        assert "Traceback" not in err and "internal error" not in err, err
        if (arch, command) in REFUSED:
            lines = [line for line in err.splitlines() if line.startswith("error:")]
            assert code == 1 and len(lines) == 1 and REFUSED[(arch, command)] in lines[0], err
            return
        assert code == 0, err
        CHECKS.get(command, lambda *_: None)(arch, folder, _json(out), tmp_path, capsys)


# -- each command's reference: the pipeline, a manual forward, hand-written hooks -------------------
def _model(folder: str, auto: str, **kwargs: Any) -> tuple[Any, Any]:
    import transformers

    model = getattr(transformers, auto).from_pretrained(folder, **kwargs).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    return model, tokenizer


def _encode(tokenizer: Any, model: Any, *texts: str) -> Any:
    from bertstudio.core.anatomy.families import reads_segments

    encoding = tokenizer(*texts, return_tensors="pt")
    if not reads_segments(model.config):
        encoding.pop("token_type_ids", None)
    return encoding


def _fill_mask(arch: str, folder: str, result: Any, *_: Any) -> None:
    from transformers import pipeline

    model, tokenizer = _model(folder, "AutoModelForMaskedLM")
    expected = pipeline("fill-mask", model=model, tokenizer=tokenizer, top_k=5)(
        f"the cat sat on the {tokenizer.mask_token} .")
    assert [c["token_id"] for c in result[0]] == [c["token"] for c in expected]
    assert [c["score"] for c in result[0]] == pytest.approx([c["score"] for c in expected], abs=TOLERANCE)


def _per_layer(arch: str, folder: str, result: Any, _out: Path, capsys: Any) -> None:
    layers = result["layers"] if isinstance(result, dict) else result
    code = main(["fill-mask", "--model", folder, f"the cat sat on the {make_tokenizer(arch).mask_token} .", "--json"])
    plain = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [c["token_id"] for c in layers[-1][0]] == [c["token_id"] for c in plain[0]]  # the last layer is fill-mask


def _classify(arch: str, folder: str, result: Any, *_: Any) -> None:
    import torch

    model, tokenizer = _model(folder, "AutoModelForSequenceClassification")
    with torch.no_grad():
        probabilities = model(**_encode(tokenizer, model, "the cat sat on the mat .")).logits.softmax(-1)[0]
    expected = {model.config.id2label[i]: float(p) for i, p in enumerate(probabilities)}
    assert {r["label"]: r["score"] for r in result} == pytest.approx(expected, abs=TOLERANCE)


def _heads_off(arch: str, folder: str, result: Any, *_: Any) -> None:
    import torch

    from tests.core.test_patching import _blocks, _hooked

    model, tokenizer = _model(folder, "AutoModelForSequenceClassification")
    _, projections, shared = _blocks(model)
    heads = getattr(model.config, "num_attention_heads", None) or model.config.n_heads
    layers = getattr(model.config, "num_hidden_layers", None) or model.config.n_layers

    def off(index: int, args: tuple[Any, ...]) -> Any:
        if index != 0:
            return None
        x = args[0].clone()
        width = x.shape[-1] // heads
        x[..., width:2 * width] = 0
        return (x, *args[1:])

    handles = _hooked(model, projections, shared, layers, off)
    with torch.no_grad():
        probabilities = model(**_encode(tokenizer, model, "the cat sat on the mat .")).logits.softmax(-1)[0]
    for handle in handles:
        handle.remove()
    expected = {model.config.id2label[i]: float(p) for i, p in enumerate(probabilities)}
    assert {r["label"]: r["score"] for r in result} == pytest.approx(expected, abs=TOLERANCE)


def _attention(arch: str, folder: str, result: Any, *_: Any) -> None:
    import numpy as np
    import torch

    from bertstudio.core.anatomy.modules import square_attention

    model, tokenizer = _model(folder, "AutoModel", attn_implementation="eager")
    encoding = _encode(tokenizer, model, "the cat sat on the mat .")
    length = encoding["input_ids"].shape[-1]
    with torch.no_grad():
        weights = model(**encoding, output_attentions=True).attentions
    expected = np.stack([square_attention(model, a[0], length).numpy() for a in weights])
    got = np.asarray(result["attentions"], dtype=np.float32)
    np.testing.assert_allclose(got, expected, atol=TOLERANCE)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-4)  # every row, banded or not, sums to one


def _qk(arch: str, folder: str, result: Any, *_: Any) -> None:
    from bertstudio.core.anatomy.families import FAMILIES
    from tests.fixtures.checkpoints import make_config

    family = FAMILIES[make_config(arch, 10).model_type]
    assert result["qk"]["query"] and result["norms"]
    if family.scores_are_qk and family.attention_weights == "full":
        import numpy as np

        from bertstudio.core.tasks.attention.qk import softmax

        np.testing.assert_allclose(softmax(np.asarray(result["qk"]["scores"], dtype=np.float32)),
                                   np.asarray(result["attention"], dtype=np.float32), atol=1e-5)


def _similarity(arch: str, folder: str, result: Any, *_: Any) -> None:
    import torch

    model, tokenizer = _model(folder, "AutoModel")
    vectors = []
    with torch.no_grad():
        for text in ("the cat sat .", "the dog ran ."):
            encoding = _encode(tokenizer, model, text)
            hidden = model(**encoding).last_hidden_state[0]
            vectors.append(hidden.mean(0))
    expected = float(torch.nn.functional.cosine_similarity(vectors[0], vectors[1], dim=0))
    assert result["scores"][0]["score"] == pytest.approx(expected, abs=TOLERANCE)


def _trained(arch: str, folder: str, result: Any, out: Path, capsys: Any) -> None:
    """The model train wrote is reloaded and used by a command (DeBERTa-v3's included)."""
    code, printed, err = _run(["classify", "--model", str(out / "full"), TEXT_SHORT, "--json"], capsys)
    assert code == 0 and len(json.loads(printed)) == 2, err


def _lora(arch: str, folder: str, result: Any, out: Path, capsys: Any) -> None:
    code, _, err = _run(["train", "--merge", str(out / "lora"), "--output", str(out / "merged")], capsys)
    assert code == 0, err
    code, printed, err = _run(["classify", "--model", str(out / "merged"), TEXT_SHORT, "--json"], capsys)
    assert code == 0 and len(json.loads(printed)) == 2, err


def _export(arch: str, folder: str, result: Any, *_: Any) -> None:
    assert result["max_difference"] <= 1e-4 and Path(result["path"]).is_file()


TEXT_SHORT = "the cat sat ."
CHECKS = {"fill-mask": _fill_mask, "fill-mask --per-layer": _per_layer, "classify": _classify,
          "heads off": _heads_off, "attention": _attention, "attention --qk --norms": _qk,
          "similarity": _similarity, "train": _trained, "train --lora, merge": _lora, "export onnx": _export}


def test_every_cell_is_run_here_or_by_its_dedicated_test() -> None:
    skipped = {(arch, command) for arch in ALL_ARCHITECTURES for command in COVERED if covered_by(arch, command)}
    assert len(CELLS) + len(skipped) == len(ALL_ARCHITECTURES) * len(COMMANDS)
    assert not skipped & set(REFUSED), "a refusal is the matrix's own check"
    assert all(covered_by(arch, "patch") for arch in ALL_ARCHITECTURES)  # patching: every architecture, by hand


def test_the_readme_table_is_the_matrix() -> None:
    """The README's architecture table is rendered from cases.py (python -m tests.matrix.cases prints it)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table() in readme, "paste `python -m tests.matrix.cases` into the README's architecture section"


@pytest.mark.parametrize("arch", ["roberta", "mpnet", "longformer", "xlm-roberta", "camembert", "modernbert"])
def test_a_long_text_without_a_tokenizer_limit_fits_the_positions(arch: str, checkpoint_factory: Any, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Positions start after the padding id in RoBERTa's family, MPNet and Longformer: a tokenizer that
    names no limit gets the model's own (max_position_embeddings less the offset), never an IndexError."""
    import shutil

    folder = tmp_path / arch
    shutil.copytree(checkpoint_factory(arch, "SequenceClassification"), folder)
    config_file = folder / "tokenizer_config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config.pop("model_max_length", None)
    config_file.write_text(json.dumps(config), encoding="utf-8")
    code, out, err = _run(["classify", "--model", str(folder), " ".join(["the cat sat on the mat ."] * 40), "--json"],
                          capsys)
    assert code == 0 and len(json.loads(out)) == 2, err

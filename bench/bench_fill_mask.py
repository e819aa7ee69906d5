"""Foundation: time to window shown, model load, fill-mask latency (core and CLI) vs raw transformers."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from common import MODELS, Row, bert_base, interleaved, sizes

TEXT_MINILM = "The capital of France is [MASK]. It is a [MASK] city with many museums and old [MASK]."


def _window_shown() -> float:
    code = "from bertstudio.app import run_app; run_app(exit_when_shown=True)"
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}).stdout
    total = time.perf_counter() - start
    shown = float(out.split("window shown after")[1].split()[0]) if "window shown after" in out else total
    return shown


def _cli(model: str, text: str, ours: bool) -> float:
    """Wall time of a whole process: `bertstudio fill-mask` vs a script calling the raw pipeline."""
    raw = ("import sys; from transformers import pipeline; "
           "print(pipeline('fill-mask', model=sys.argv[1])(sys.argv[2], top_k=5))")
    command = ([sys.executable, "-m", "bertstudio", "fill-mask", "--model", model, text, "--json"] if ours
               else [sys.executable, "-c", raw, model, text])
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, timeout=300)
    return time.perf_counter() - start


def _model_rows(name: str, text: str, folder: str = "", cli: bool = True, repeats: int = 40) -> list[Row]:
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    from bertstudio.core.models import LoadRequest, load_uncached
    from bertstudio.core.tasks.fill_mask import predict

    folder = folder or str(MODELS / name)

    def ours_load() -> None:
        load_uncached(LoadRequest(folder, "fill-mask"))

    def raw_load() -> None:
        AutoTokenizer.from_pretrained(folder)
        AutoModelForMaskedLM.from_pretrained(folder)

    load_ours, load_raw = interleaved(ours_load, raw_load, repeats=5)
    loaded = load_uncached(LoadRequest(folder, "fill-mask"))
    raw_pipe = pipeline("fill-mask", model=AutoModelForMaskedLM.from_pretrained(folder).eval(),
                        tokenizer=AutoTokenizer.from_pretrained(folder))
    ours_s, raw_s = interleaved(lambda: predict(loaded, text, 5), lambda: raw_pipe(text, top_k=5), repeats=repeats)
    out = [
        Row(f"{name}: model load", load_ours, load_raw, "tokenizer + weights + head report"),
        Row(f"{name}: fill-mask latency (core)", ours_s, raw_s, "vs FillMaskPipeline"),
    ]
    if cli:
        cli_ours = min(_cli(folder, text, True) for _ in range(2))
        cli_raw = min(_cli(folder, text, False) for _ in range(2))
        out.append(Row(f"{name}: fill-mask CLI process", cli_ours, cli_raw, "vs python -c pipeline(...)"))
    return out


def rows() -> list[Row]:
    out = []
    if "small" in sizes():
        out.append(Row("window shown (process start -> showEvent)", _window_shown(), note="torch not yet imported"))
        out += _model_rows("all-minilm-l6-v2", TEXT_MINILM)
        out += _model_rows("rxnmapper-albert-smiles-mlm", "C C ( = [MASK] ) O")
    if "base" in sizes():
        out += _model_rows("bert-base-sized", TEXT_MINILM, str(bert_base("MaskedLM")), cli=False, repeats=20)
    return out

"""The target rows of issue 39 for bench/gpu_check.py, each reported with its target and whether it was
met: in-process evaluate rows/s and dense TFLOP/s against the pipeline and the sorted loop, a first
pass against a warm one, the whole process against bare scripts, and `--runtime onnx` on the CPU.
`report(check, **fields)` is gpu_check's (one line a check, gathered into gpu_check.json)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

Report = Callable[..., None]


def dense_tflops(folder: Path, texts: list[str], seconds: float) -> float:
    """Dense TFLOP/s of the work that counts: every real token through every layer (its linear layers
    and its attention over its own row), no padding; what the forward of 'rows/s' was worth."""
    from transformers import AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=512)["input_ids"]]
    hidden, ffn = config.hidden_size, config.intermediate_size
    per_token = 2 * (4 * hidden * hidden + 2 * hidden * ffn)
    flops = config.num_hidden_layers * sum(n * per_token + 4 * n * n * hidden for n in lengths)
    return flops / seconds / 1e12


def engine_model(quick: bool) -> tuple[str, Path, tuple[str, ...] | None]:
    from common import MODELS, bert_base, topic_labels

    return ("MiniLM", MODELS / "all-minilm-l6-v2", None) if quick else \
        ("bert-base-sized", bert_base("SequenceClassification", topic_labels()), topic_labels())


def engine_checks(report: Report, device: str, dtypes: list[str], quick: bool, rows: int) -> None:
    """The batch engine (core/engine.py): evaluate from a CSV vs pipeline(batch_size=32) vs a 25-line sorted
    loop on the review-like length mix (4-480 words), per number format, on one model object.
    Targets (GPU): >= 5x the pipeline, >= 2x the sorted loop, >= 150 dense TFLOP/s; CPU: >= 2x the pipeline."""
    from bench_engine import evaluate_rates, review_texts

    name, folder, labels = engine_model(quick)
    gpu = device.startswith("cuda")
    for dtype in dtypes:
        found = evaluate_rates(folder, rows, device, dtype, labels, warm_all=gpu)
        ours, pipe, loop = found["ours"], found["pipeline"], found["loop"]
        tflops = dense_tflops(folder, review_texts(rows), ours)
        met = pipe / ours >= (5.0 if gpu else 2.0) and (not gpu or (loop / ours >= 2.0 and tflops >= 150))
        report(f"engine evaluate {name} {rows} review rows {device} {dtype}",
               ok=found["score_gap"] < (1e-4 if dtype == "float32" else 5e-2),
               ours_rows_s=round(rows / ours, 1), pipeline_rows_s=round(rows / pipe, 1),
               loop_rows_s=round(rows / loop, 1), vs_pipeline=round(pipe / ours, 2), vs_loop=round(loop / ours, 2),
               dense_tflops=round(tflops, 3), score_gap=found["score_gap"],
               target=("met" if met else "missed") + (": >= 5x pipeline, >= 2x loop, >= 150 TFLOP/s" if gpu
                                                      else ": >= 2x pipeline"))


def first_pass_checks(report: Report, device: str, dtypes: list[str], quick: bool, rows: int) -> None:
    """A freshly loaded model's first evaluate (new padded widths meet cold kernels) against the same
    evaluate again, warm, per number format. Target: first <= 1.3x warm. scikit-learn's metrics are
    imported before (1-2 s once per process, paid by a whole-process evaluate: the `whole` stage's cost)."""
    import sklearn.metrics  # noqa: F401
    from bench_engine import _write, review_texts
    from common import synced_seconds

    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import MODEL_CACHE, LoadRequest, load_model

    name, folder, labels = engine_model(quick)
    for dtype in dtypes:
        MODEL_CACHE.clear()
        loaded = load_model(LoadRequest(str(folder), "classification", device, dtype))
        data = _write(review_texts(rows, seed=5), labels or [str(i) for i in range(loaded.model.config.num_labels)])
        dataset = read_dataset("classification", data)
        times = [synced_seconds(lambda: evaluate(loaded, dataset, options=EvalOptions()), device)  # noqa: B023
                 for _ in range(2)]
        ratio = times[0] / times[1]
        report(f"first pass vs warm, evaluate {name} {rows} rows {device} {dtype}", ok=True,
               first_rows_s=round(rows / times[0], 1), warm_rows_s=round(rows / times[1], 1),
               first_over_warm=round(ratio, 2), target=("met" if ratio <= 1.3 else "missed") + ": <= 1.3x")


class Setting(NamedTuple):
    """One `tune` process: cuDNN attention allowed, the width multiple, tokenizing overlapped with the
    forward, and torch.compile's mode ("": none; "reduce-overhead": CUDA graphs, one per bucketed shape)."""

    cudnn: int
    multiple: int
    overlap: int
    compile: str = ""

    def __str__(self) -> str:
        return (f"cuDNN {'in' if self.cudnn else 'out'}, widths x{self.multiple}, tokenizing "
                f"{'overlapped' if self.overlap else 'first'}" + (f", compiled {self.compile}" if self.compile else ""))


# The first: the engine before issue 39's tuning; the last: the engine now.
TUNE_SETTINGS = (Setting(1, 32, 0), Setting(1, 8, 0), Setting(0, 32, 0), Setting(0, 8, 0), Setting(0, 8, 1))
# gpu_check's last stage, CUDA only (what they would buy is launch overhead and fusion on the GPU; on a CPU
# they only cost compile time): one graph per padded shape, so a first pass pays a compile per shape.
COMPILE_SETTINGS = (Setting(0, 8, 1, "default"), Setting(0, 32, 1, "reduce-overhead"))


def tune_checks(report: Report, device: str, dtypes: list[str], quick: bool, rows: int,
                settings: tuple[Setting, ...] = TUNE_SETTINGS) -> None:
    """The engine's GPU constants, each setting in a fresh process (bench/gpu_tune.py: what a first pass pays
    stays with the process), in the half precision a GPU user picks: first and warm rows/s; the engine's own
    setting also sweeps the token budget warm. Target per setting: first <= 1.3x warm."""
    from bench_engine import _write, review_texts

    from bertstudio.core import devices, engine

    name, folder, labels = engine_model(quick)
    dtype = next((d for d in reversed(dtypes) if d != "float32"), dtypes[-1])
    data = _write(review_texts(rows, seed=7), labels or ("LABEL_0", "LABEL_1"))
    ours = Setting(int(devices.CUDNN_ATTENTION), engine.GPU_WIDTH_MULTIPLE, 1)
    for setting in settings:
        budgets = "8192,16384,32768,65536" if setting == ours else ""
        engine_mark = " (the engine)" if setting == ours else ""
        check = f"tune {setting}{engine_mark}: evaluate {name} {rows} rows {device} {dtype}"
        found = _tuned(report, check, [str(folder), str(data), device, dtype, "--cudnn", str(setting.cudnn),
                                       "--multiple", str(setting.multiple), "--overlap", str(setting.overlap),
                                       "--compile", setting.compile, "--budgets", budgets])
        if found is None:
            continue
        ratio = found["first"] / found["warm"]
        report(check, ok=True, load_s=round(found["load"], 2), first_rows_s=round(rows / found["first"], 1),
               warm_rows_s=round(rows / found["warm"], 1), first_over_warm=round(ratio, 2),
               tokenize_share_of_warm=round(found["tokenize"] / found["warm"], 3),
               budget_rows_s={budget: round(rows / seconds, 1) for budget, seconds in found["budgets"].items()},
               attention_kernels=found.get("attention_kernels", {}), shapes=found.get("shapes"),
               tokenized_first_runs=found.get("tokenized_first_runs"), compile=setting.compile,
               target=("met" if ratio <= 1.3 else "missed") + ": first <= 1.3x warm"
               + (" (first includes compiling each shape)" if setting.compile else ""))


def compile_checks(report: Report, device: str, dtypes: list[str], quick: bool, rows: int) -> None:
    """The compiled settings (COMPILE_SETTINGS) as `tune` rows, on CUDA only and where torch can compile
    (a C compiler and Python's headers: a bare image may have neither); else one row says why not."""
    import os
    import shutil
    import sysconfig

    if not device.startswith("cuda"):
        report(f"compile: {device}", ok=True, skipped="compiled settings run on CUDA only")
        return
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None or not headers.exists():
        report(f"compile: {device}", ok=False, error=f"torch.compile needs a C compiler (found: {compiler}) and "
                                                     f"{headers} (exists: {headers.exists()})")
        return
    tune_checks(report, device, dtypes, quick, rows, COMPILE_SETTINGS)


def _tuned(report: Report, check: str, argv: list[str]) -> dict[str, Any] | None:
    """bench/gpu_tune.py's JSON line for one setting, or None with the failure reported."""
    import json
    import subprocess
    import sys

    script = Path(__file__).resolve().parent / "gpu_tune.py"
    try:
        done = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        report(check, ok=False, error="no result within 300 s")
        return None
    lines = done.stdout.strip().splitlines()
    try:
        found: dict[str, Any] = json.loads(lines[-1]) if done.returncode == 0 and lines else {}
    except json.JSONDecodeError:
        found = {}
    if not found:
        report(check, ok=False, error=(done.stderr.strip() or done.stdout.strip())[-800:])
        return None
    return found


def whole_process_checks(report: Report, device: str, dtypes: list[str], quick: bool, rows: int) -> None:
    """`bertstudio evaluate` and `classify "one text"` as whole fresh processes, twice, against bare scripts
    (bench/bench_whole_process.py) in the number format a GPU user picks (the last given). Target: <= 1.0x."""
    from bench_engine import _write, review_texts
    from bench_whole_process import whole_process

    name, folder, labels = engine_model(quick)
    dtype = dtypes[-1]
    found = whole_process(folder, _write(review_texts(rows, seed=6), labels or ("LABEL_0", "LABEL_1")), device, dtype)
    for ours, bare in (("classify", "bare classify"), ("evaluate", "bare sorted loop")):
        wall, bare_wall = min(w for w, _ in found[ours]), min(w for w, _ in found[bare])
        report(f"whole process {ours} {name} {rows} rows {device} {dtype}", ok=True,
               seconds=[round(w, 1) for w, _ in found[ours]], bare_seconds=[round(w, 1) for w, _ in found[bare]],
               cpu_seconds=[round(c, 1) for _, c in found[ours]],
               bare_cpu_seconds=[round(c, 1) for _, c in found[bare]], ratio=round(wall / bare_wall, 2),
               target=("met" if wall <= bare_wall else "missed") + f": <= {bare}")


def onnx_checks(report: Report, quick: bool, rows: int) -> None:
    """`evaluate --runtime onnx` on the CPU, float32 and int8, against PyTorch and the pipeline
    (bench/bench_onnx_runtime.py). Target: >= 2.5x the pipeline; float32: equal top-1, P within 1e-3."""
    from bench_onnx_runtime import minilm_classifier, onnx_rates
    from common import bert_base, topic_labels

    name, folder, labels = ("MiniLM", minilm_classifier(), ("negative", "positive")) if quick else \
        ("bert-base-sized", bert_base("SequenceClassification", topic_labels()), topic_labels())
    found = onnx_rates(folder, rows, labels)
    for runtime in ("onnx", "onnx int8"):
        speed = found["pipeline"] / found[runtime]
        exact = found[f"{runtime} same top-1"] == 1.0 and found[f"{runtime} probability gap"] <= 1e-3
        report(f"evaluate --runtime {runtime} {name} {rows} rows cpu", ok=exact or runtime == "onnx int8",
               rows_s=round(rows / found[runtime], 1), pipeline_rows_s=round(rows / found["pipeline"], 1),
               torch_rows_s=round(rows / found["torch"], 1), vs_pipeline=round(speed, 2),
               vs_torch=round(found["torch"] / found[runtime], 2), same_top1=found[f"{runtime} same top-1"],
               probability_gap=found[f"{runtime} probability gap"],
               target=("met" if speed >= 2.5 else "missed") + ": >= 2.5x pipeline")

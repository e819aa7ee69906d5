"""Checks for a lent GPU: every command in float32, float16 and bfloat16 on CUDA against the CPU's
float32, training of every task with fp16/bf16 mixed precision, explain, evaluate, int8's refusal,
and every target row of issue 39 in one run: in-process evaluate rows/s and dense TFLOP/s against
the pipeline and the sorted loop (engine), a first pass against a warm one (first), the engine's GPU
constants (tune: cuDNN attention in or out, widths rounded to 8 or 32, tokenizing overlapped with the
forward or first, the token budget), the whole process against the bare sorted-loop script (whole),
training against a plain Trainer (trainer), `--runtime onnx` on the CPU (onnx) and, last, torch.compile
of the forward and CUDA graphs (compile: a compile per shape, minutes). Each such row says its target
and whether it was met (`target`).

The suite runs on CPU only; this is the one place the CUDA paths run. Every command is called
in-process (`bertstudio.cli.main`) with `--json` and its output compared with the same command on
the CPU: numbers by their largest difference, strings (labels, tokens, answers) by how many differ,
attributions by rank agreement. Trained models come from our own `train` on the demo data, so the
agreement of their predictions across number formats means something (tiny random checkpoints
only show the arithmetic). Prints a line a check and writes gpu_check.json.

    python bench/gpu_check.py --out DIR                     # on the GPU machine
    python bench/gpu_check.py --device cpu --dtypes float32 --precisions no --quick   # a dry run here
    python bench/gpu_check.py --device cpu --dtypes float32 --rows 8 --skip tiny,speed,trainer,train,whole
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
DATA = ROOT / "resources" / "datasets"
EVAL = ROOT / "tests" / "data" / "evaluate"
IGNORED_KEYS = {"model", "device", "dtype", "seconds", "elapsed", "notes", "note", "path", "source", "rows_per_second",
                "ms_per_row", "size_mb"}
RESULTS: list[dict[str, object]] = []


def cli(*argv: str) -> tuple[int, str, str]:
    """Run one command in this process: (exit code, stdout, stderr)."""
    from bertstudio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv), open_window=None)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except Exception as error:  # noqa: BLE001 - a traceback is itself a finding
            import traceback

            err.write("".join(traceback.format_exception(error)))
            code = 99
    return code, out.getvalue(), err.getvalue()


def report(check: str, **fields: object) -> None:
    RESULTS.append({"check": check, **fields})
    shown = " ".join(f"{k}={_short(v)}" for k, v in fields.items())
    print(f"[gpu] {check}: {shown}", flush=True)


def _short(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    text = str(value)
    return text if len(text) < 300 else text[:300] + "…"


def differences(a: object, b: object, key: str = "") -> dict[str, float]:
    """Largest numeric difference, strings that differ (of how many), lowest attribution Spearman."""
    out = {"max_abs": 0.0, "max_at": "", "strings_differ": 0, "strings": 0, "min_spearman": 1.0, "scale": {}}
    _walk(a, b, key, out)
    scale = out.pop("scale").get(out["max_at"], 0.0)
    out["max_rel"] = out["max_abs"] / scale if scale else 0.0  # to the largest reference value under that key
    return out


def _walk(a: object, b: object, key: str, out: dict) -> None:
    if key in IGNORED_KEYS:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            _walk(a.get(k), b.get(k), k, out)
    elif isinstance(a, list) and isinstance(b, list):
        if key == "attributions" and len(a) == len(b) > 2 and all(isinstance(x, (int, float)) for x in a + b):
            from scipy.stats import spearmanr

            rho = float(spearmanr(a, b).statistic)
            out["min_spearman"] = min(out["min_spearman"], rho if math.isfinite(rho) else 1.0)
        if len(a) != len(b):
            out["strings_differ"] += 1
            out["strings"] += 1
        for x, y in zip(a, b, strict=False):
            _walk(x, y, key, out)
    elif isinstance(a, bool) or isinstance(b, bool):
        out["strings"] += 1
        out["strings_differ"] += a != b
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        out["scale"][key] = max(out["scale"].get(key, 0.0), abs(a) if math.isfinite(a) else 0.0)
        gap = _gap(a, b)
        if gap > out["max_abs"]:
            out["max_abs"], out["max_at"] = gap, key
    elif isinstance(a, str) or isinstance(b, str):
        out["strings"] += 1
        out["strings_differ"] += a != b


def _gap(a: float, b: float) -> float:
    """|a - b|; 0 for the same infinity or two NaNs; infinite when only one side is finite."""
    if math.isfinite(a) and math.isfinite(b):
        return abs(a - b)
    return 0.0 if a == b or (math.isnan(a) and math.isnan(b)) else math.inf


def run_json(argv: list[str]) -> tuple[object | None, str, float]:
    started = time.perf_counter()
    code, out, err = cli(*argv, "--json")
    seconds = time.perf_counter() - started
    if code != 0:
        return None, f"exit {code}: {err.strip()[-600:]}", seconds
    try:
        return json.loads(out), "", seconds
    except json.JSONDecodeError:
        lines = [json.loads(line) for line in out.splitlines() if line.strip().startswith("{")]
        return lines, "", seconds


def across_formats(name: str, argv: list[str], device: str, dtypes: list[str]) -> None:
    """One command on the CPU in float32, then on `device` in each number format, compared."""
    reference, error, _ = run_json([*argv, "--device", "cpu"])
    if reference is None:
        report(f"{name} cpu float32", ok=False, error=error)
        return
    for dtype in dtypes:
        result, error, seconds = run_json([*argv, "--device", device, "--dtype", dtype])
        if result is None:
            report(f"{name} {device} {dtype}", ok=False, error=error)
            continue
        diff = differences(reference, result)
        metrics = result.get("metrics") if isinstance(result, dict) else None
        shown = {"metrics": {k: v for k, v in metrics.items() if isinstance(v, (int, float))}} if metrics else {}
        report(f"{name} {device} {dtype}", ok=True, seconds=round(seconds, 2), **diff, **shown)


# -- the models ------------------------------------------------------------------------------------
def tiny_models(work: Path) -> dict[str, Path]:
    from tests.fixtures.checkpoints import build_checkpoint

    heads = {"fill-mask": "MaskedLM", "nsp": "NextSentencePrediction", "ner": "TokenClassification",
             "qa": "QuestionAnswering", "classify": "SequenceClassification", "choice": "MultipleChoice",
             "model": "Model"}
    models = {key: build_checkpoint(work / f"tiny-{head}", "bert", head) for key, head in heads.items()}
    for arch in ("distilbert", "roberta", "albert", "electra"):
        models[f"{arch}-mlm"] = build_checkpoint(work / f"tiny-{arch}", arch, "MaskedLM")
    return models


def train(name: str, argv: list[str], device: str) -> Path | None:
    """One `bertstudio train` run on `device`; reports its last metrics and time."""
    started = time.perf_counter()
    code, out, err = cli("train", *argv, "--device", device, "--json")
    seconds = time.perf_counter() - started
    events = [json.loads(line) for line in out.splitlines() if line.strip().startswith("{")]
    last = next((e.get("metrics", {}) for e in events if e.get("event") == "result"), {})
    losses = [e["loss"] for e in events if isinstance(e.get("loss"), (int, float))]
    report(f"train {name}", ok=code == 0 and all(math.isfinite(x) for x in losses), seconds=round(seconds, 1),
           first_loss=losses[0] if losses else None, last_loss=losses[-1] if losses else None,
           eval=last, error="" if code == 0 else err.strip()[-800:])
    output = Path(argv[argv.index("--output") + 1])
    return output if code == 0 else None


def trained_models(work: Path, device: str, steps: int, precisions: list[str]) -> dict[str, Path]:
    first, other = precisions[0], precisions[1 % len(precisions)]
    common = ["--max-steps", str(steps), "--batch-size", "32", "--seed", "1"]
    pre = train(f"pretraining from scratch ({first})", [
        "--task", "pretraining", "--from-scratch", "--train", str(DATA / "pretraining_corpus.txt"),
        "--output", str(work / "pre"), "--layers", "4", "--heads", "4", "--hidden-size", "256",
        "--ffn-size", "1024", "--lr", "5e-4", "--precision", first, *common], device)
    if pre is None:
        return {}
    base = ["--model", str(pre), "--lr", "2e-4", *common]
    jobs = {
        "classify": ["--task", "text-classification", "--train", str(DATA / "reviews_train.csv"),
                     "--eval", str(DATA / "reviews_eval.csv")],
        "ner": ["--task", "token-classification", "--train", str(DATA / "ner_train.conll"),
                "--eval", str(DATA / "ner_eval.conll")],
        "qa": ["--task", "qa", "--train", str(DATA / "qa_train.json"), "--eval", str(DATA / "qa_eval.json")],
        "choice": ["--task", "choice", "--train", str(DATA / "choice_train.csv"),
                   "--eval", str(DATA / "choice_eval.csv")],
        "regression": ["--task", "regression", "--train", str(DATA / "sts_train.csv"),
                       "--eval", str(DATA / "sts_eval.csv")],
    }
    models: dict[str, Path] = {"pretraining": pre}
    for i, (key, argv) in enumerate(jobs.items()):
        precision = precisions[i % len(precisions)]
        done = train(f"{key} ({precision})", [*argv, *base, "--output", str(work / key), "--precision", precision],
                     device)
        if done:
            models[key] = done
    if "classify" in models:
        train(f"classify again ({other})", [*jobs["classify"], *base, "--output", str(work / "classify-2"),
                                            "--precision", other], device)
        train(f"distill ({first})", [
            "--task", "distill", "--teacher", str(models["classify"]), "--student-layers", "2",
            "--train", str(DATA / "reviews_train.csv"), "--eval", str(DATA / "reviews_eval.csv"),
            "--output", str(work / "distill"), "--precision", first, "--lr", "2e-4", *common], device)
    return models


# -- the checks ------------------------------------------------------------------------------------
def inference_checks(tiny: dict[str, Path], device: str, dtypes: list[str]) -> None:
    text = "john lives in paris and works in berlin ."
    commands = {
        "fill-mask": ["fill-mask", "--model", str(tiny["fill-mask"]), "the cat [MASK] on the mat ."],
        "nsp": ["nsp", "--model", str(tiny["nsp"]), "the cat sat .", "the dog ran fast .", "paris is big ."],
        "ner": ["ner", "--model", str(tiny["ner"]), text],
        "qa": ["qa", "--model", str(tiny["qa"]), "--question", "where does john live ?", "--context", text],
        "classify": ["classify", "--model", str(tiny["classify"]), "the film was good ."],
        "choice": ["choice", "--model", str(tiny["choice"]), "--prompt", "the cat", "--choice", "sat on the mat .",
                   "--choice", "ran to school ."],
        "similarity": ["similarity", "--model", str(tiny["model"]), "the cat sat .", "a dog ran .", "the cat sat ."],
        "attention": ["attention", "--model", str(tiny["model"]), text],
        "attention --norms --qk": ["attention", "--model", str(tiny["model"]), text, "--norms", "--qk",
                                   "--layer", "1", "--head", "0"],
        "classify --ablate-heads": ["classify", "--model", str(tiny["classify"]), "the film was good .",
                                    "--ablate-heads", "0:1"],
        "head-importance classify": ["head-importance", "--model", str(tiny["classify"]), "--task", "classify",
                                     "the film was good ."],
    }
    from transformers import AutoTokenizer

    for arch in ("distilbert", "roberta", "albert", "electra"):
        folder = str(tiny[f"{arch}-mlm"])
        mask = AutoTokenizer.from_pretrained(folder).mask_token
        commands[f"{arch} fill-mask"] = ["fill-mask", "--model", folder, f"the cat {mask} on the mat ."]
        commands[f"{arch} attention --norms --qk"] = ["attention", "--model", folder, text, "--norms", "--qk",
                                                      "--layer", "1", "--head", "1"]
    for name, argv in commands.items():
        across_formats(f"tiny {name}", argv, device, dtypes)


def trained_checks(models: dict[str, Path], device: str, dtypes: list[str], quick: bool) -> None:
    evaluations = {
        "classify": ["--task", "classify", "--data", str(DATA / "reviews_eval.csv")],
        "ner": ["--task", "ner", "--data", str(EVAL / "ner_heldout.conll")],
        "qa": ["--task", "qa", "--data", str(EVAL / "qa.csv")],
        "choice": ["--task", "choice", "--data", str(EVAL / "choice.csv")],
        "pretraining": ["--task", "fill-mask", "--data", str(DATA / "pretraining_heldout.txt")],
    }
    for key, argv in evaluations.items():
        if key in models:
            across_formats(f"evaluate {key}", ["evaluate", "--model", str(models[key]), *argv], device, dtypes)
    if "classify" not in models:
        return
    classifier = str(models["classify"])
    sentence = "Overall, the speaker is truly great."
    methods = ["gradient", "grad-x-input", "integrated-gradients", "occlusion"]
    methods += [] if quick else ["lime", "kernel-shap"]
    for method in methods:
        across_formats(f"explain {method}", ["explain", "--model", classifier, "--task", "classify",
                                             "--method", method, "--seed", "0", sentence], device, dtypes)
    across_formats("explain --faithfulness", ["explain", "--model", classifier, "--task", "classify",
                                              "--method", "gradient", "--faithfulness", sentence], device, dtypes)
    across_formats("counterfactual hotflip", ["counterfactual", "--model", classifier, "--task", "classify",
                                              "--method", "hotflip", sentence], device, dtypes)
    across_formats("evaluate classify --compare-quantize int8 (cpu)", [
        "evaluate", "--model", classifier, "--task", "classify", "--data", str(DATA / "reviews_eval.csv"),
        "--compare", classifier, "--compare-quantize", "int8"], "cpu", ["float32"])
    code, _, err = cli("classify", "--model", classifier, "--device", device, "--quantize", "int8", sentence)
    report(f"int8 on {device} is refused with a message", ok=(code == 1 and "Traceback" not in err) or device == "cpu",
           code=code, message=err.strip()[-300:])
    result, error, _ = run_json(["neighbours", "--model", classifier, "--corpus", str(DATA / "pretraining_corpus.txt"),
                                 "--layer", "2", "--token", "1", "--device", device, sentence])
    report(f"neighbours on {device}", ok=result is not None, error=error,
           first=(result or {}).get("neighbours", [None])[:1] if isinstance(result, dict) else None)


def speed_checks(device: str, dtypes: list[str]) -> None:
    """BERT-base-sized classification, 128 rows: ours vs the raw pipeline on the same device and format."""
    from common import bert_base  # a random 110M checkpoint with MiniLM's tokenizer (BERTSTUDIO_TEST_MODELS)

    folder = bert_base("SequenceClassification", ("a", "b", "c"))
    for dtype in dtypes:
        ours, theirs = _time_classification(folder, device, dtype)
        report(f"bert-base-sized classify 128 rows {device} {dtype}", ok=True, ours_ms=round(ours * 1000, 1),
               raw_ms=round(theirs * 1000, 1), ratio=round(ours / theirs, 3))


def _time_classification(folder: Path, device: str, dtype: str) -> tuple[float, float]:
    import torch
    from bench_classification import PIPELINE_BATCH, ROWS
    from common import interleaved
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.classification import classify_batch

    loaded = load_model(LoadRequest(str(folder), "classification", device, dtype))
    model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=getattr(torch, dtype)).eval()
    raw = pipeline("text-classification", model=model, tokenizer=AutoTokenizer.from_pretrained(folder), device=device)
    return interleaved(lambda: classify_batch(loaded, ROWS), lambda: raw(ROWS, top_k=None, batch_size=PIPELINE_BATCH),
                       10)


def trainer_checks(device: str, precisions: list[str], sizes: list[str], work: Path) -> None:
    """Training throughput through bertstudio (event callback, JSON log) vs a plain Trainer with the
    same TrainingArguments, on the device: a GPU step is short, so any per-step cost of ours shows."""
    from bench_training import _model_folder
    from common import bert_base

    folders = {}
    if "tiny" in sizes:
        folders["tiny bert 2x128"] = _model_folder(work)
    if "base" in sizes:
        folders["bert-base-sized"] = bert_base("SequenceClassification", ("negative", "positive"))
    for name, folder in folders.items():
        for n, precision in enumerate(precisions):
            # the first format of the biggest model also splits the gap: Trainer with our callback alone,
            # and Trainer with torch's own attention choice (cuDNN in; ours leaves it out on a GPU)
            split = n == 0 and name == list(folders)[-1]
            rates = _training_rates(folder, device, precision, work, split)
            ours, raw = rates.pop("ours"), rates.pop("plain Trainer")
            report(f"train 60 steps x 32, {name}, {device} {precision}", ok=True, ours_samples_s=round(ours, 1),
                   raw_samples_s=round(raw, 1), ratio=round(ours / raw, 3),
                   **{k.replace(" ", "_") + "_samples_s": round(v, 1) for k, v in rates.items()},
                   target=("met" if ours >= raw else "missed") + ": >= 1.0x a plain Trainer")


def _training_rates(folder: Path, device: str, precision: str, work: Path, split: bool) -> dict[str, float]:
    """Median samples/s of 3 alternate runs each after one warm-up: ours, a plain Trainer (both with the
    attention kernels ours sets), and where `split`, Trainer with our event callback and Trainer with cuDNN
    attention allowed (torch's default on Hopper)."""
    import statistics

    import torch
    from bench_training import plain_trainer_rate

    from bertstudio.core.progress import TaskControl
    from bertstudio.core.training.callback import event_callback
    from bertstudio.core.training.config import TrainConfig
    from bertstudio.core.training.engine import train

    config = TrainConfig(task="text-classification", model=str(folder), train_file=str(DATA / "reviews_train.csv"),
                         eval_share=0.0, output_dir=str(work / "ours"), overwrite=True, max_steps=60, batch_size=32,
                         max_length=64, device=device, precision=precision)
    events: list[object] = []

    def with_cudnn(allowed: bool, run: object) -> float:
        before = torch.backends.cuda.cudnn_sdp_enabled()
        torch.backends.cuda.enable_cudnn_sdp(allowed)
        try:
            return run()  # type: ignore[operator]
        finally:
            torch.backends.cuda.enable_cudnn_sdp(before)

    runs = {
        "ours": lambda: train(config, TaskControl(on_progress=events.append)).metrics["train_samples_per_second"],
        "plain Trainer": lambda: with_cudnn(False, lambda: plain_trainer_rate(config, work / "raw")),
    }
    if split:
        runs["trainer with our callback"] = lambda: with_cudnn(False, lambda: plain_trainer_rate(
            config, work / "raw",  # as the training engine adds it: fp16's skipped steps are no divergence
            [event_callback(events.append, lambda: False, config.samples_per_step, config.precision == "fp16")]))
        runs["trainer with cudnn attention"] = lambda: with_cudnn(True, lambda: plain_trainer_rate(
            config, work / "raw"))
    for run in runs.values():  # warm-up
        run()
    found: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(3):
        for name, run in runs.items():
            found[name].append(run())
    return {name: statistics.median(values) for name, values in found.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtypes", default="float32,float16,bfloat16")
    parser.add_argument("--precisions", default="fp16,bf16", help="mixed precision for training runs")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="fewer steps and methods (a dry run)")
    parser.add_argument("--skip", default="",
                        help="comma list of stages: tiny,speed,engine,first,tune,whole,onnx,trainer,train,compile")
    parser.add_argument("--rows", type=int, default=0,
                        help="review rows of the engine, first, whole and onnx stages (default 1024; --quick 16)")
    parser.add_argument("--sizes", default="tiny,base", help="models of the trainer stage: tiny,base")
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    import gpu_targets as targets
    import torch
    import transformers

    info = {"torch": torch.__version__, "transformers": transformers.__version__, "cuda": torch.cuda.is_available()}
    if torch.cuda.is_available():
        info |= {"gpu": torch.cuda.get_device_name(0), "bf16": torch.cuda.is_bf16_supported()}
    report("environment", **info)
    dtypes, skip = args.dtypes.split(","), set(args.skip.split(","))
    precisions = args.precisions.split(",")
    rows = args.rows or (16 if args.quick else 1024)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        stages = [  # the first pass first: no kernel of its shapes has run in this process yet
            ("first", lambda: targets.first_pass_checks(report, args.device, dtypes, args.quick, rows)),
            ("tiny", lambda: inference_checks(tiny_models(work), args.device, dtypes)),
            ("speed", lambda: speed_checks(args.device, dtypes)),
            ("engine", lambda: targets.engine_checks(report, args.device, dtypes, args.quick, rows)),
            ("tune", lambda: targets.tune_checks(report, args.device, dtypes, args.quick, rows)),
            ("whole", lambda: targets.whole_process_checks(report, args.device, dtypes, args.quick, min(rows, 1024))),
            ("onnx", lambda: targets.onnx_checks(report, args.quick, min(rows, 256))),
            ("trainer", lambda: trainer_checks(args.device, precisions, args.sizes.split(","), work)),
            ("train", lambda: trained_checks(trained_models(work, args.device, args.steps, precisions),
                                             args.device, dtypes, args.quick)),
            ("compile", lambda: targets.compile_checks(report, args.device, dtypes, args.quick, rows)),
        ]
        for name, stage in stages:
            if name in skip:
                continue
            started = time.perf_counter()
            try:
                stage()
            except Exception as error:  # noqa: BLE001 - report and go on to the next stage
                import traceback

                report(f"stage {name} failed", ok=False, error="".join(traceback.format_exception(error))[-1500:])
            print(f"[gpu] stage {name}: {time.perf_counter() - started:.0f} s", flush=True)
            Path(args.out, "gpu_check.json").write_text(json.dumps(RESULTS, indent=1), encoding="utf-8")
    failed = [r["check"] for r in RESULTS if r.get("ok") is False]
    print(f"[gpu] {len(RESULTS)} checks, {len(failed)} failed: {failed}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

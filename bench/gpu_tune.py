"""One setting of the engine's GPU constants, in a fresh process (bench/gpu_check.py's `tune` stage runs
one per setting): cuDNN attention in or out (devices.CUDNN_ATTENTION), the width multiple
(engine.GPU_WIDTH_MULTIPLE), tokenizing overlapped with the forward (engine.encode_run) or all rows first
(encode_all, then run) and, warm, each token budget (engine.GPU_TOKEN_BUDGET). A fresh process
because what a first pass pays (cuDNN graphs per shape, kernels loaded on first use) is kept by the process.
Prints one JSON line: load seconds, the first evaluate's, a warm one's, tokenizing the rows alone (on the
tokenizer's threads: what overlapping it with the GPU could hide), warm seconds per budget, and on CUDA
the attention kernels a warm run launched, by family.

    python bench/gpu_tune.py FOLDER DATA.csv cuda float16 --cudnn 0 --multiple 8 --overlap 1 --budgets 8192,16384
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("data")
    parser.add_argument("device")
    parser.add_argument("dtype")
    parser.add_argument("--cudnn", type=int, default=0)
    parser.add_argument("--multiple", type=int, default=8)
    parser.add_argument("--overlap", type=int, default=1)
    parser.add_argument("--compile", default="", help="torch.compile's mode for the model's forward ('': none)")
    parser.add_argument("--budgets", default="")
    args = parser.parse_args()
    import torch

    from bertstudio.core import devices, engine
    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import LoadRequest, load_model

    devices.CUDNN_ATTENTION = bool(args.cudnn)
    engine.GPU_WIDTH_MULTIPLE = args.multiple
    if not args.overlap:
        engine.encode_run = tokenized_first  # type: ignore[assignment] # a module global: encode_run_logits finds it

    import sklearn.metrics  # noqa: F401 - evaluate's first import, not what a first pass is measured for
    from common import synced_seconds

    gpu = args.device.startswith("cuda")

    def timed(func: Callable[[], object]) -> float:
        return synced_seconds(func, args.device)

    dataset = read_dataset("classification", Path(args.data))
    started = time.perf_counter()
    loaded = load_model(LoadRequest(args.folder, "classification", args.device, args.dtype))
    load = time.perf_counter() - started
    if args.compile:
        compiled(loaded.model, args.compile)

    def run() -> object:
        return evaluate(loaded, dataset, options=EvalOptions())

    first, warm = timed(run), timed(run)
    texts = [x.inputs[0] for x in dataset.examples]
    tokenize = min(timed(lambda: engine.encode_all(loaded, texts)) for _ in range(2))  # the host's share
    kernels = attention_kernels(run, gpu)
    budgets = {}
    for budget in [int(b) for b in args.budgets.split(",") if b]:
        engine.GPU_TOKEN_BUDGET = budget
        run()  # its new shapes warmed
        budgets[budget] = timed(run)
    print(json.dumps({"load": load, "first": first, "warm": warm, "tokenize": tokenize, "budgets": budgets,
                      "attention_kernels": kernels, "compile": args.compile,
                      "tokenized_first_runs": TOKENIZED_FIRST_RUNS[0], "shapes": shapes(loaded, texts),
                      "cudnn_enabled": torch.backends.cuda.cudnn_sdp_enabled()}))
    return 0


def shapes(loaded: Any, texts: list[str]) -> int:
    """How many padded (rows, width) shapes one evaluate runs: a compile each, where compiled."""
    from bertstudio.core import engine

    encoded = engine.encode_all(loaded, texts)
    multiple = engine.width_multiple(loaded)
    return len({(len(rows), engine.padded_width(int(encoded.lengths[rows].max()), multiple, encoded.max_length))
                for rows in engine.batches(encoded, engine.token_budget(loaded), engine.MAX_ROWS, multiple)})


def compiled(model: Any, mode: str) -> None:
    """The model's forward through torch.compile, one graph per padded shape (dynamic=False: what CUDA
    graphs need); enough recompiles allowed for every bucketed width, so no shape falls back to eager."""
    import torch

    config = torch._dynamo.config
    for limit in ("recompile_limit", "cache_size_limit"):
        if hasattr(config, limit):
            setattr(config, limit, 256)
    model.forward = torch.compile(model.forward, mode=mode, dynamic=False)


TOKENIZED_FIRST_RUNS = [0]  # runs through `tokenized_first`: the JSON says the setting took effect


def tokenized_first(loaded: Any, texts: Any, pairs: Any, forward: Any, control: Any = None, *,
                    encode: Any = None, **options: Any) -> tuple[Any, list[Any]]:
    """engine.encode_run without the overlap: every row tokenized, then the batches run."""
    from bertstudio.core import engine

    TOKENIZED_FIRST_RUNS[0] += 1
    encoded = engine.encode_all(loaded, texts, pairs, control, **(encode or {}))
    return encoded, engine.run(loaded, encoded, forward, control, **options)


def attention_kernels(run: object, gpu: bool) -> dict[str, list[float]]:
    """Which attention kernels one warm evaluate ran, by family: {family: [launches, device ms]} (the
    profiler's CUDA kernel names; on the CPU its aten ops), so a row says whether sdpa took cuDNN, flash or
    memory-efficient."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA if gpu else ProfilerActivity.CPU]) as traced:
        run()  # type: ignore[operator]
    families = {"cudnn": ("cudnn",), "flash": ("flash",), "memory-efficient": ("fmha", "mem_eff", "efficient"),
                "math (softmax)": ("softmax",)}
    found: dict[str, list[float]] = {}
    for event in traced.key_averages():
        name = event.key.lower()
        for family, marks in families.items():
            if any(mark in name for mark in marks):
                entry = found.setdefault(family, [0, 0.0])
                entry[0] += event.count
                entry[1] += getattr(event, "device_time_total", 0.0) / 1000
                break
    return found


if __name__ == "__main__":
    raise SystemExit(main())

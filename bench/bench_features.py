"""SAE training throughput (issue 42): training tokens per second of core/features/sae.train, on the
CPU and, where torch sees one, on a GPU, against a minimal dense TopK loop (the OpenAI recipe without
AuxK or the decoder-norm projection) on the same states, sizes and steps.

States: all-minilm-l6-v2's layer 3 on the bundled corpus (1,667 tokens, d 384), repeated to
BENCH_SAE_TOKENS rows (default 8,192: 32 steps of 256 tokens); m = expansion x d. Ours and the plain
loop alternate, three times each, and each is the median (BENCH_CLOCK=cpu: one thread's CPU time,
steadier on a shared machine; a GPU is timed by the wall clock after a synchronize).

    BENCH_SAE_SIZES=2x8,8x32 python bench/run.py features
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from common import MODELS, Row, clock, threads

ROOT = Path(__file__).resolve().parent.parent
TOKENS = int(os.environ.get("BENCH_SAE_TOKENS", "8192"))
SIZES = [tuple(int(v) for v in part.split("x")) for part in os.environ.get("BENCH_SAE_SIZES", "2x8,8x32").split(",")]
EPOCHS = 1
REPEATS = 3  # ours and the plain loop alternate; the median of each


def states() -> np.ndarray:
    from bertstudio.core.corpus.index import read_corpus
    from bertstudio.core.features.states import collect
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl

    loaded = load_model(LoadRequest(str(MODELS / "all-minilm-l6-v2"), "attention"))
    lines = read_corpus(ROOT / "resources" / "corpus" / "ambiguous_words.txt")
    found = collect(loaded, [text for _, text in lines], 3, TaskControl()).states
    return np.resize(found, (TOKENS, found.shape[1])).astype(np.float32)


def plain_topk(x: np.ndarray, m: int, k: int, steps: int, device: str) -> None:
    """The reference: dense encoder and decoder, MSE, Adam; nothing else."""
    import torch

    generator = torch.Generator().manual_seed(0)
    data = torch.as_tensor(x).to(device)
    d = data.shape[1]
    w_dec = torch.randn(m, d, generator=generator).to(device)
    params = [w_dec.T.clone().requires_grad_(True), torch.zeros(m, device=device, requires_grad=True),
              w_dec.requires_grad_(True), data.mean(0).clone().requires_grad_(True)]
    optimiser = torch.optim.Adam(params, lr=1e-3)
    for step in range(steps):
        batch = data[(step * 256) % (len(data) - 256):][:256]
        pre = ((batch - params[3]) @ params[0] + params[1]).relu()
        values, ids = pre.topk(k, dim=-1)
        loss = ((torch.zeros_like(pre).scatter(-1, ids, values) @ params[2] + params[3] - batch) ** 2).sum(-1).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(call: Any, device: str) -> float:
    import torch

    start = clock() if device == "cpu" else time.perf_counter()
    call()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return (clock() if device == "cpu" else time.perf_counter()) - start


def rows() -> list[Row]:
    import torch

    from bertstudio.core.features.sae import TrainOptions, steps_for, train
    from bertstudio.core.progress import TaskControl

    torch.set_num_threads(threads())
    x = states()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    found = []
    for device in devices:
        for expansion, k in SIZES:
            m = expansion * x.shape[1]
            options = TrainOptions(expansion=expansion, k=k, epochs=EPOCHS)
            steps = steps_for(len(x), options)
            train(x[:512], m, TrainOptions(expansion=expansion, k=k, epochs=1), TaskControl(), device)  # warm-up
            ours_call = partial(train, x, m, options, TaskControl(), device)
            plain_call = partial(plain_topk, x, m, k, steps, device)
            pairs = [(timed(ours_call, device), timed(plain_call, device)) for _ in range(REPEATS)]
            ours, raw = float(np.median([p[0] for p in pairs])), float(np.median([p[1] for p in pairs]))
            name = torch.cuda.get_device_name() if device == "cuda" else f"cpu x{threads()}"
            found.append(Row(f"sae train m={m} k={k} ({device})", ours, raw,
                             f"{steps * 256 / ours:,.0f} tokens/s ours, {steps * 256 / raw:,.0f} plain; {name}"))
    return found

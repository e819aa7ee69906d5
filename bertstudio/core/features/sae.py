"""A TopK sparse autoencoder on one layer's hidden states (Gao et al. 2024, "Scaling and evaluating
sparse autoencoders").

    f     = TopK_k(ReLU((x - b_dec) W_enc + b_enc))      the features of a state x (d)
    x_hat = f W_dec + b_dec                               its reconstruction

W_enc is (d, m), W_dec (m, d) with unit-length rows (each feature's direction in the layer), m =
expansion x d. Trained with Adam on the mean squared error, seeded (initialisation and order);
b_dec starts at the training states' mean and W_enc at W_dec's transpose. A feature that has not
fired for `DEAD_AFTER` training tokens gets the AuxK loss (the top `k_aux` dead features
reconstruct what the live ones missed), which keeps fewer of them dead on a small corpus.
`control.check()` runs every step (Cancel) and progress is reported every few steps.

Reported on the held-out tokens (whole texts the SAE never trained on):
fraction_of_variance_explained = 1 - sum ||x - x_hat||^2 / sum ||x - mean(x)||^2 (the mean of
the held-out states), l0 = the mean count of non-zero features per token; dead features: those
that fire on no token of the whole corpus (training and held-out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.limits import check_count

if TYPE_CHECKING:
    from bertstudio.core.progress import TaskControl

ACTIVATION = "topk"
MAX_EXPANSION = 64
MAX_FEATURES = 65_536
MAX_EPOCHS = 10_000
MAX_STEPS = 200_000
BATCH_TOKENS = 256
LEARNING_RATE = 1e-3
DEAD_AFTER = 2_000  # training tokens without a firing: a feature is dead for the AuxK loss
AUX_WEIGHT = 1 / 32
DEFAULT_EXPANSION = 2
DEFAULT_K = 8
DEFAULT_EPOCHS = 30
DEFAULT_HELD_OUT = 0.1
DEFAULT_SEED = 0
ENCODE_ROWS = 4096  # states encoded at once outside training (m x rows floats)


@dataclass(frozen=True)
class Sae:
    """The weights, float32 numpy: W_enc (d, m), b_enc (m), W_dec (m, d), b_dec (d); k active features."""

    W_enc: np.ndarray  # noqa: N815 - the names the saved file and the papers use
    b_enc: np.ndarray
    W_dec: np.ndarray  # noqa: N815
    b_dec: np.ndarray
    k: int

    @property
    def d(self) -> int:
        return int(self.W_enc.shape[0])

    @property
    def m(self) -> int:
        return int(self.W_enc.shape[1])

    def tensors(self) -> dict[str, np.ndarray]:
        return {"W_enc": self.W_enc, "b_enc": self.b_enc, "W_dec": self.W_dec, "b_dec": self.b_dec}


@dataclass(frozen=True)
class Codes:
    """The active features of N states: ids (N, k) int64 and values (N, k) float32, largest first
    (a value of 0 where ReLU left fewer than k positive)."""

    ids: np.ndarray
    values: np.ndarray

    def dense(self, m: int) -> np.ndarray:
        out = np.zeros((self.ids.shape[0], m), np.float32)
        np.put_along_axis(out, self.ids, self.values, axis=1)
        return out


def check_sizes(d: int, expansion: Any, k: Any) -> tuple[int, int]:
    """(m, k) for a layer of width d: m = expansion x d features, 1 <= k <= m."""
    factor = check_count(expansion, "The expansion", 1, MAX_EXPANSION)
    m = factor * d
    if m > MAX_FEATURES:
        raise InputError(f"An expansion of {factor} on a layer of width {d} makes {m:,} features; at most "
                         f"{MAX_FEATURES:,}.", hint=f"Use an expansion of at most {max(1, MAX_FEATURES // d)}.")
    return m, check_count(k, "k (active features per token)", 1, m)


def _torch_weights(sae: Sae, device: Any = "cpu") -> tuple[Any, Any, Any, Any]:
    import torch

    return tuple(torch.as_tensor(a, device=device) for a in (sae.W_enc, sae.b_enc, sae.W_dec, sae.b_dec))  # type: ignore[return-value]


def encode_torch(x: Any, w_enc: Any, b_enc: Any, b_dec: Any, k: int) -> tuple[Any, Any]:
    """(values, ids) of TopK_k(ReLU((x - b_dec) W_enc + b_enc)), largest first."""
    pre = ((x - b_dec) @ w_enc + b_enc).relu()
    return pre.topk(k, dim=-1)


def encode(sae: Sae, states: np.ndarray) -> Codes:
    """The active features of every state (N, d), in chunks."""
    import torch

    w_enc, b_enc, _, b_dec = _torch_weights(sae)
    ids, values = [], []
    for start in range(0, states.shape[0], ENCODE_ROWS):  # numpy weights: no autograd, no model
        x = torch.as_tensor(np.asarray(states[start:start + ENCODE_ROWS], np.float32))
        v, i = encode_torch(x, w_enc, b_enc, b_dec, sae.k)
        ids.append(i.numpy())
        values.append(v.numpy())
    if not ids:
        return Codes(np.zeros((0, sae.k), np.int64), np.zeros((0, sae.k), np.float32))
    return Codes(np.concatenate(ids), np.concatenate(values))


def decode(sae: Sae, codes: Codes) -> np.ndarray:
    """x_hat = f W_dec + b_dec for the codes (sparse: only the k rows of W_dec each)."""
    rows = np.einsum("nk,nkd->nd", codes.values, sae.W_dec[codes.ids])
    return (rows + sae.b_dec).astype(np.float32)


@dataclass(frozen=True)
class Quality:
    fraction_of_variance_explained: float
    l0: float
    mse: float
    tokens: int


def quality(sae: Sae, states: np.ndarray) -> Quality:
    """FVE and L0 on `states` (see the module docstring)."""
    if states.shape[0] == 0:
        return Quality(float("nan"), float("nan"), float("nan"), 0)
    codes = encode(sae, states)
    x = states.astype(np.float64)
    residual = float(((x - decode(sae, codes)) ** 2).sum())
    total = float(((x - x.mean(axis=0)) ** 2).sum())
    fve = 1.0 - residual / total if total > 0 else float("nan")
    l0 = float((codes.values > 0).sum(axis=1).mean())
    return Quality(fve, l0, residual / states.shape[0], int(states.shape[0]))


def firing_counts(sae: Sae, states: np.ndarray) -> np.ndarray:
    """(m,) how many of the states each feature is active on."""
    codes = encode(sae, states)
    counts = np.zeros(sae.m, np.int64)
    np.add.at(counts, codes.ids[codes.values > 0], 1)
    return counts


@dataclass(frozen=True)
class TrainOptions:
    expansion: int = DEFAULT_EXPANSION
    k: int = DEFAULT_K
    epochs: int = DEFAULT_EPOCHS
    batch: int = BATCH_TOKENS
    lr: float = LEARNING_RATE
    seed: int = DEFAULT_SEED
    held_out: float = DEFAULT_HELD_OUT


def steps_for(tokens: int, options: TrainOptions) -> int:
    return max(1, min(MAX_STEPS, math.ceil(tokens / options.batch) * options.epochs))


def _aux_loss(pre: Any, error: Any, dead: Any, k_aux: int, w_dec: Any) -> Any:
    """AuxK: the top `k_aux` dead features reconstruct what the live ones missed (summed squares)."""
    import torch

    aux_values, aux_ids = pre.masked_fill(~dead, 0.0).topk(min(k_aux, int(dead.sum())), dim=-1)
    aux = torch.zeros_like(pre).scatter(-1, aux_ids, aux_values) @ w_dec
    return ((error.detach() - aux) ** 2).sum(-1).mean()


def _unit_step(optimiser: Any, w_dec: Any) -> None:
    """The optimiser's step keeping the decoder rows unit length (their gradient along them removed first)."""
    import torch

    with torch.no_grad():
        grad = w_dec.grad
        if grad is not None:
            grad -= (grad * w_dec).sum(-1, keepdim=True) * w_dec
        optimiser.step()
        w_dec /= w_dec.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def train(states: np.ndarray, m: int, options: TrainOptions, control: TaskControl,
          device: str = "cpu") -> tuple[Sae, list[float]]:
    """A TopK SAE with m features fitted to `states` (N, d); and the loss every step (normalised MSE)."""
    import torch

    control.check()
    k = options.k
    n, d = states.shape
    generator = torch.Generator().manual_seed(options.seed)
    x_all = torch.as_tensor(np.ascontiguousarray(states, np.float32)).to(device)
    mean = x_all.mean(0)
    scale = float(((x_all - mean) ** 2).sum(-1).mean().clamp_min(1e-12))  # the loss in units of the variance
    w_dec = torch.randn(m, d, generator=generator).to(device)
    w_dec /= w_dec.norm(dim=-1, keepdim=True)
    params = {"W_enc": w_dec.T.clone(), "b_enc": torch.zeros(m, device=device), "W_dec": w_dec,
              "b_dec": mean.clone()}
    for p in params.values():
        p.requires_grad_(True)
    optimiser = torch.optim.Adam(params.values(), lr=options.lr)
    steps = steps_for(n, options)
    batch = min(options.batch, n)
    since_fired = torch.zeros(m, dtype=torch.long, device=device)
    k_aux = min(m, max(1, d // 2))
    losses: list[float] = []
    order = torch.randperm(n, generator=generator).to(device)
    cursor = 0
    report_every = max(1, steps // 200)
    with torch.enable_grad():
        for step in range(steps):
            control.check()
            if cursor + batch > n:
                order, cursor = torch.randperm(n, generator=generator).to(device), 0
            x = x_all[order[cursor:cursor + batch]]
            cursor += batch
            pre = ((x - params["b_dec"]) @ params["W_enc"] + params["b_enc"]).relu()
            values, ids = pre.topk(k, dim=-1)
            x_hat = (values.unsqueeze(-1) * params["W_dec"][ids]).sum(1) + params["b_dec"]  # only k rows each
            error = x - x_hat
            loss = (error ** 2).sum(-1).mean() / scale
            fired = torch.zeros(m, dtype=torch.bool, device=device)
            fired[ids[values > 0]] = True
            since_fired = torch.where(fired, torch.zeros_like(since_fired), since_fired + batch)
            dead = since_fired >= DEAD_AFTER
            aux = _aux_loss(pre, error, dead, k_aux, params["W_dec"]) / scale if bool(dead.any()) else None
            optimiser.zero_grad(set_to_none=True)
            (loss + AUX_WEIGHT * aux if aux is not None else loss).backward()
            _unit_step(optimiser, params["W_dec"])
            value = float(loss.detach())
            if not math.isfinite(value):
                raise InputError(f"Training stopped at step {step + 1}: the loss is not a finite number.",
                                 hint="Try a smaller learning rate or another seed.")
            losses.append(value)
            if step % report_every == 0 or step + 1 == steps:
                control.report(f"Step {step + 1:,} of {steps:,}: loss {value:.4f} (share of variance missed)",
                               (step + 1) / steps)
    weights = {name: p.detach().cpu().numpy().astype(np.float32) for name, p in params.items()}
    return Sae(weights["W_enc"], weights["b_enc"], weights["W_dec"], weights["b_dec"], k), losses

"""A tuned lens for masked LMs (Belrose et al. 2023): one affine translator per layer, trained so
that the model's own MLM head, reading the translated state, gives the final layer's distribution.

The logit lens reads hidden_states[l] with the head as it is (core/tasks/fill_mask/layers.py); early layers
of a masked LM are not in the basis the head expects, so it shows noise there. The tuned lens reads
head(T_l(h_l)), T_l(h) = h + h W_l^T + b_l (W_l, b_l zero at the start: it begins as the logit
lens), trained on a corpus: 15 % of each line's tokens are masked (seeded), every layer's state at
the masked positions is kept, and the sum over layers of KL(p_final || p_lens_l) is minimised with
Adam, the model frozen. Pre-LN models go through their final norm first, as in the logit lens.
Saved as lens.safetensors (weight (L, d, d), bias (L, d): layers 0..L-1, the last layer is the
answer itself) and lens.json (the model, the corpus, and the KL per layer on held-out lines for
the logit lens and the tuned lens).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core import engine
from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.features import store
from bertstudio.core.limits import check_count

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel
    from bertstudio.core.progress import TaskControl

WEIGHTS = "lens.safetensors"
INFO = "lens.json"
KIND = "tuned lens"
FORMAT = 1
MASK_SHARE = 0.15
MAX_POSITIONS = 20_000  # masked positions kept (every layer's state at each: levels x positions x d floats)
BATCH = 128
LEARNING_RATE = 1e-3
DEFAULT_EPOCHS = 30
MAX_EPOCHS = 2_000
HELD_OUT = 0.1


@dataclass(frozen=True)
class TunedLens:
    """Translators for hidden states 0..L-1: weight (L, d, d), bias (L, d); `info`: lens.json."""

    weight: np.ndarray
    bias: np.ndarray
    info: dict[str, Any]
    path: Path | None = None

    @property
    def levels(self) -> int:
        return int(self.weight.shape[0])

    def translate(self, level: int, hidden: Any) -> Any:
        """T_level(h) for a torch tensor (…, d); the last level (and beyond) is left as it is."""
        import torch

        if level >= self.levels:
            return hidden
        w = torch.as_tensor(self.weight[level], device=hidden.device, dtype=hidden.dtype)
        b = torch.as_tensor(self.bias[level], device=hidden.device, dtype=hidden.dtype)
        return hidden + hidden @ w.T + b


def reader(loaded: LoadedModel) -> Callable[[int, Any], Any]:
    """(level, hidden states) -> MLM logits, as the logit lens reads a level (final norm first where a
    pre-LN model has one, below the last level)."""
    from bertstudio.core.anatomy.modules import anatomy
    from bertstudio.core.features.states import levels

    head = masked_lm_head_of(loaded)
    final_norm = anatomy(loaded.model).final_norm
    last = levels(loaded)

    def read(level: int, hidden: Any) -> Any:
        if final_norm is not None and level < last:
            hidden = final_norm(hidden)
        return head(hidden)

    return read


def masked_lm_head_of(loaded: LoadedModel) -> Callable[[Any], Any]:
    from bertstudio.core.anatomy.modules import masked_lm_head

    head = masked_lm_head(loaded.model)
    if head is None:
        raise MissingHeadError(f"{type(loaded.model).__name__} has no masked-LM head: a tuned lens reads layers "
                               "through it.", hint="Load a masked-LM checkpoint (fill-mask).")
    return head


@contextmanager
def frozen(model: Any) -> Iterator[None]:
    """The model's parameters without gradients for the block (gradients flow to the inputs only)."""
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)


def masked_states(loaded: LoadedModel, texts: list[str], seed: int, control: TaskControl) -> tuple[np.ndarray, int]:
    """(levels + 1, positions, d) float32: every hidden state at the masked positions of every text
    (MASK_SHARE of each text's non-special tokens, at least one, seeded per text); the count of texts read."""
    import torch

    tokenizer = loaded.tokenizer
    if tokenizer.mask_token_id is None:
        raise MissingHeadError("This tokenizer has no mask token, so a tuned lens cannot be trained.")
    encoded = engine.encode_all(loaded, texts, control=control, special_tokens=True)
    chosen: list[list[int]] = []
    ids = []
    for n, (row, special) in enumerate(zip(encoded.input_ids, encoded.extras["special_tokens_mask"], strict=True)):
        candidates = [i for i, s in enumerate(special) if not s]
        count = max(1, round(MASK_SHARE * len(candidates)))
        picks = sorted(random.Random(seed * 1_000_003 + n).sample(candidates, count)) if candidates else []
        chosen.append(picks)
        picked = set(picks)
        ids.append([tokenizer.mask_token_id if i in picked else t for i, t in enumerate(row)])
    masked = engine.Encoded(ids, encoded.token_type_ids, encoded.cut, encoded.max_length)
    model = loaded.model

    def forward(batch: engine.Batch) -> Any:
        hidden = model(**batch.inputs, output_hidden_states=True).hidden_states
        return torch.stack(hidden, dim=1)  # rows x levels x tokens x d

    def per_row(batch: engine.Batch, found: Any) -> list[Any]:
        return [found[k][:, chosen[int(i)]] for k, i in enumerate(batch.rows)]

    rows = engine.run(loaded, masked, forward, control, verb="Read", unit="lines", rows_of=per_row)
    parts = [r for r in rows if r.shape[1]]
    if not parts:
        raise InputError("The corpus has no token that can be masked.", hint="Use lines of text, one per line.")
    return np.concatenate(parts, axis=1).astype(np.float32), len(texts)


def kl_per_level(read: Callable[[int, Any], Any], states: Any, lens: TunedLens | None = None,
                 batch: int = 512) -> np.ndarray:
    """The mean KL(p_final || p_level) over the positions, per level (the last is 0); the caller holds the model."""
    import torch

    levels = states.shape[0]
    total = np.zeros(levels, np.float64)
    count = states.shape[1]
    for start in range(0, count, batch):
        chunk = torch.as_tensor(states[:, start:start + batch])
        target = torch.log_softmax(read(levels - 1, chunk[-1]).float(), -1)
        for level in range(levels):
            hidden = lens.translate(level, chunk[level]) if lens is not None else chunk[level]
            found = torch.log_softmax(read(level, hidden).float(), -1)
            total[level] += float((target.exp() * (target - found)).sum(-1).clamp_min(0).sum())
    return total / max(1, count)


def train(loaded: LoadedModel, states: np.ndarray, epochs: int, seed: int, control: TaskControl,
          lr: float = LEARNING_RATE) -> tuple[np.ndarray, np.ndarray]:
    """Translators for levels 0..L-1 fitted on (levels + 1, positions, d) states."""
    import torch

    read = reader(loaded)
    levels, count, d = states.shape[0] - 1, states.shape[1], states.shape[2]
    generator = torch.Generator().manual_seed(seed)
    device = loaded.model.device
    data = torch.as_tensor(states).to(device)
    weight = torch.zeros(levels, d, d, device=device, requires_grad=True)
    bias = torch.zeros(levels, d, device=device, requires_grad=True)
    optimiser = torch.optim.Adam([weight, bias], lr=lr)
    steps = max(1, math.ceil(count / BATCH) * epochs)
    with engine.exclusive(loaded, grad=True), frozen(loaded.model):
        for step in range(steps):
            control.check()
            rows = torch.randint(0, count, (min(BATCH, count),), generator=generator).to(device)
            chunk = data[:, rows]
            with torch.no_grad():
                target = torch.log_softmax(read(levels, chunk[-1]).float(), -1)
            loss = torch.zeros((), device=device)
            for level in range(levels):
                hidden = chunk[level] + chunk[level] @ weight[level].T + bias[level]
                found = torch.log_softmax(read(level, hidden).float(), -1)
                loss = loss + (target.exp() * (target - found)).sum(-1).mean()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            value = float(loss.detach()) / max(1, levels)
            if not math.isfinite(value):
                raise InputError(f"Training stopped at step {step + 1}: the loss is not a finite number.")
            if step % max(1, steps // 100) == 0 or step + 1 == steps:
                control.report(f"Step {step + 1:,} of {steps:,}: mean KL per layer {value:.4f}", (step + 1) / steps)
    return weight.detach().cpu().numpy(), bias.detach().cpu().numpy()


def train_lens(loaded: LoadedModel, corpus: str | Path, output: str | Path, control: TaskControl,
               epochs: Any = DEFAULT_EPOCHS, seed: Any = 0, overwrite: bool = False) -> TunedLens:
    """`features lens`: a tuned lens for a masked LM over a corpus file, saved as a lens folder."""
    from bertstudio.core.corpus.cache import corpus_digest
    from bertstudio.core.corpus.index import read_corpus
    from bertstudio.core.features.states import split_texts

    epochs = check_count(epochs, "The epochs", 1, MAX_EPOCHS)
    seed = check_count(seed, "The seed", 0, 2**31 - 1)
    masked_lm_head_of(loaded)  # MissingHeadError before any work
    if loaded.info.head_warning:
        raise MissingHeadError(f"{loaded.info.request.source} has no trained masked-LM head: a lens onto a random "
                               "head shows nothing.", hint="Train the tuned lens on a masked-LM checkpoint.")
    target = store.prepare(output, overwrite)
    lines = read_corpus(corpus, control)
    texts = [text for _, text in lines]
    train_texts, held_texts = split_texts(len(texts), HELD_OUT, seed)
    if len(train_texts) == 0 or len(held_texts) == 0:
        raise InputError(f"The corpus has {len(texts)} line(s): too few to keep held-out lines apart.",
                         hint="Use a corpus of many lines.")
    train_states, _ = masked_states(loaded, [texts[i] for i in train_texts], seed, control)
    held_states, _ = masked_states(loaded, [texts[i] for i in held_texts], seed + 1, control)
    if train_states.shape[1] > MAX_POSITIONS:
        keep = np.sort(np.random.default_rng(seed).choice(train_states.shape[1], MAX_POSITIONS, replace=False))
        train_states = train_states[:, keep]
    started = time.perf_counter()
    weight, bias = train(loaded, train_states, epochs, seed, control)
    seconds = time.perf_counter() - started
    control.report("Measuring the KL per layer on the held-out lines", None)
    read = reader(loaded)
    record: dict[str, Any] = {"format": FORMAT, **store.model_identity(loaded), "levels": int(weight.shape[0]),
                              "d": int(weight.shape[1]), "corpus": str(Path(corpus).expanduser().resolve()),
                              "corpus_lines": len(texts), "corpus_sha256": corpus_digest(lines),
                              "train_positions": int(train_states.shape[1]),
                              "held_out_positions": int(held_states.shape[1]), "epochs": epochs, "seed": seed,
                              "mask_share": MASK_SHARE, "seconds": round(seconds, 3)}
    lens = TunedLens(weight, bias, record)
    with engine.exclusive(loaded):
        record["kl_logit_lens"] = [round(float(v), 6) for v in kl_per_level(read, held_states)]
        record["kl_tuned_lens"] = [round(float(v), 6) for v in kl_per_level(read, held_states, lens)]
    store.write_folder(target, KIND, {WEIGHTS: {"weight": weight, "bias": bias}}, {INFO: record})
    return load(target)


def load(folder: str | Path) -> TunedLens:
    place = store.folder(folder, KIND, (WEIGHTS, INFO))
    path = place / INFO
    record = store.read_json(path, "tuned lens description")
    levels = store.field(record, "levels", int, path, lambda v: 0 < v <= 512)
    d = store.field(record, "d", int, path, lambda v: 0 < v <= 65_536)
    store.field(record, "model", str, path, bool)
    arrays = store.read_tensors(place / WEIGHTS, {"weight": (levels, d, d), "bias": (levels, d)}, "tuned lens file")
    return TunedLens(arrays["weight"].astype(np.float32), arrays["bias"].astype(np.float32), record, place)


def check_model(lens: TunedLens, loaded: LoadedModel) -> None:
    from bertstudio.core.features.states import levels

    if not store.same_model(lens.info, loaded):
        raise InputError(f"The tuned lens in '{lens.path}' was trained on {lens.info.get('model')}, not on "
                         f"{loaded.info.request.source}.", hint="Train a tuned lens for this model.")
    if lens.levels != levels(loaded) or lens.weight.shape[1] != store.model_identity(loaded)["hidden_size"]:
        raise InputError(f"The tuned lens in '{lens.path}' has {lens.levels} layers of width {lens.weight.shape[1]}; "
                         f"{loaded.info.request.source} does not.")

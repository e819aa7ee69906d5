"""`features train`: a TopK SAE on one layer of a model over a corpus file, saved as an SAE folder.

Read the corpus (one text per line, core/corpus's reader), take hidden_states[L] of every token
through the batch engine, keep whole lines apart as the held-out share, train (sae.train), report
FVE and L0 on the held-out tokens and the dead features on all, and write the folder with the
feature contexts. The output folder is checked before any work starts.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.features import sae as sae_math
from bertstudio.core.features import sae_folder, states, store
from bertstudio.core.limits import check_count

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel
    from bertstudio.core.progress import TaskControl


def check_options(options: sae_math.TrainOptions) -> sae_math.TrainOptions:
    epochs = check_count(options.epochs, "The epochs", 1, sae_math.MAX_EPOCHS)
    seed = check_count(options.seed, "The seed", 0, 2**31 - 1)
    if not 0.0 < float(options.held_out) <= 0.5:
        raise InputError(f"The held-out share must be above 0 and at most 0.5, not {options.held_out}.")
    if not 0.0 < float(options.lr) <= 1.0:
        raise InputError(f"The learning rate must be above 0 and at most 1, not {options.lr}.")
    batch = check_count(options.batch, "The batch (tokens per step)", 1, 65_536)
    return replace(options, epochs=epochs, seed=seed, batch=batch)


def too_small(tokens: int, m: int, d: int, expansion: int) -> InputError:
    fits = tokens // d
    hint = (f"Use --expansion {fits} or less, or a larger corpus." if fits >= 1
            else "Use a larger corpus (more lines of text).")
    return InputError(f"The corpus is too small for an expansion of {expansion}: {tokens:,} training tokens for "
                      f"{m:,} features (the layer has width {d}); an SAE needs at least one token per feature.",
                      hint=hint)


def train_features(loaded: LoadedModel, corpus: str | Path, layer: Any, output: str | Path,
                   options: sae_math.TrainOptions, control: TaskControl, overwrite: bool = False
                   ) -> sae_folder.SaeFolder:
    from bertstudio.core.corpus.cache import corpus_digest
    from bertstudio.core.corpus.index import read_corpus
    from bertstudio.core.features import contexts

    level = states.check_layer(loaded, layer)
    options = check_options(options)
    d = int(store.model_identity(loaded)["hidden_size"])
    m, k = sae_math.check_sizes(d, options.expansion, options.k)
    expansion = m // d
    target = store.prepare(output, overwrite)  # before any work: a folder we may not write is said at once
    lines = read_corpus(corpus, control)
    texts = [text for _, text in lines]
    control.report(f"Reading layer {level} of {len(texts):,} lines", 0.0)
    found = states.collect(loaded, texts, level, control)
    train_texts, held_texts = states.split_texts(len(texts), options.held_out, options.seed)
    if len(held_texts) == 0 or len(train_texts) == 0:
        raise InputError(f"The corpus has {len(texts)} line(s): too small to keep a held-out share apart.",
                         hint="Use a corpus of many lines (one text per line).")
    train_rows, held_rows = found.rows_of(train_texts), found.rows_of(held_texts)
    if len(train_rows) < m:
        raise too_small(len(train_rows), m, d, expansion)
    started = time.perf_counter()
    sae, losses = sae_math.train(found.states[train_rows], m, replace(options, k=k), control,
                                 device=str(loaded.model.device))
    seconds = time.perf_counter() - started
    control.report("Measuring on the held-out lines", None)
    held = sae_math.quality(sae, found.states[held_rows])
    codes = sae_math.encode(sae, found.states)
    fired = np.zeros(m, bool)
    fired[codes.ids[codes.values > 0]] = True
    dead = int(m - fired.sum())
    built = contexts.build(codes, m, found.text, found.position, found.tokens, found.spans, texts,
                           [number for number, _ in lines])
    steps = len(losses)
    record: dict[str, Any] = {
        "format": sae_folder.FORMAT, **store.model_identity(loaded), "layer": level, "d": d, "m": m, "k": k,
        "expansion": expansion, "activation": sae_math.ACTIVATION,
        "encoding": ("f = TopK_k(ReLU((x - b_dec) W_enc + b_enc)); x_hat = f W_dec + b_dec; "
                     "x = hidden_states[layer]"),
        "fraction_of_variance_explained": round(held.fraction_of_variance_explained, 6), "l0": round(held.l0, 4),
        "mse": round(held.mse, 6), "dead_features": dead, "dead_share": round(dead / m, 6),
        "held_out_tokens": held.tokens, "train_tokens": int(len(train_rows)), "corpus_tokens": len(found),
        "held_out_lines": int(len(held_texts)),
        "corpus": str(Path(corpus).expanduser().resolve()), "corpus_lines": len(texts),
        "corpus_sha256": corpus_digest(lines), "epochs": options.epochs, "steps": steps, "batch": options.batch,
        "learning_rate": options.lr, "seed": options.seed, "held_out": options.held_out,
        "final_loss": round(float(np.mean(losses[-10:])), 6), "seconds": round(seconds, 3),
        "tokens_per_second": round(steps * min(options.batch, len(train_rows)) / max(seconds, 1e-9), 1),
        "device": str(loaded.model.device)}
    arrays, document = contexts.saved(built)
    control.check()
    store.write_folder(target, sae_folder.KIND, {sae_folder.WEIGHTS: sae.tensors(), contexts.TENSORS: arrays},
                       {sae_folder.INFO: record, contexts.DOCUMENT: document})
    return sae_folder.load(target)

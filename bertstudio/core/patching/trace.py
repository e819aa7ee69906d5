"""Trace why: exact activation patching, batched, for any task with an Explain adapter.

The clean and corrupted inputs are encoded by the task's own `prepare` (explain.targets), so the
target probability is the one `explain` uses. Patched runs are copies of the corrupted input in one
batch, each with one activation from the clean run (TransformerLens' `generic_activation_patch`,
batched); one heatmap row is one batch (or a few, under a token budget) through `engine.run`, with
progress and Cancel between them. Inputs of the same token length are patched position by position.
When the lengths differ there is no position-by-position counterpart: the states heatmap is left out, the heads and
whole attention layers are patched at the positions the two inputs share (matched by their tokens:
the common beginning and end), and a target read at a token position (a mask, an NER token, a QA
start) is refused rather than read somewhere else.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from bertstudio.core import engine, notes
from bertstudio.core.engine import exclusive
from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.explain.share import Share
from bertstudio.core.explain.targets import Prepared, prepare
from bertstudio.core.models import LoadedModel
from bertstudio.core.patching.attribution import AGREEMENT_SEED, estimate, spearman
from bertstudio.core.patching.hooks import CONTEXT, STATE, Copy, noised, patched, recording, sites
from bertstudio.core.patching.result import PatchResult
from bertstudio.core.patching.setup import Noise, Setup
from bertstudio.core.progress import TaskControl

BATCH_TOKENS = 16_384  # tokens per patched forward pass (copies x sequences x length)
MAX_NOISE_SEED = 2**31 - 1
MAX_SAMPLE = 1024  # cells attribution patching is checked on (each one exact patched run)


def _matched(clean: Prepared, corrupted: Prepared, width: int, other_width: int) -> list[tuple[int, int]]:
    """Positions of the two inputs that hold the same tokens around the edit, row by row."""
    pairs = []
    for row in range(clean.sequences):
        mine = [p for p in clean.keep if p // width == row]
        theirs = [p for p in corrupted.keep if p // other_width == row]
        matcher = difflib.SequenceMatcher(None, [clean.tokens[p] for p in mine],
                                          [corrupted.tokens[p] for p in theirs], autojunk=False)
        for block in matcher.get_matching_blocks():
            pairs += [(mine[block.a + k], theirs[block.b + k]) for k in range(block.size)]
    return pairs


def _noise(loaded: LoadedModel, clean: Prepared, spec: Noise, columns: tuple[int, ...]) -> Any:
    import torch

    if not spec.positions:
        raise InputError("Choose at least one token to corrupt with noise.")
    bad = [p for p in spec.positions if not 0 <= p < len(columns)]
    if bad:
        raise InputError(f"Token {bad[0]} does not exist: the input has tokens 0-{len(columns) - 1}.")
    if not 0 <= spec.seed <= MAX_NOISE_SEED:
        raise InputError(f"The noise seed must be between 0 and {MAX_NOISE_SEED}.")
    weight: Any = loaded.model.get_input_embeddings().weight
    std = float(weight.detach().float().std())
    ids = clean.inputs["input_ids"]
    width = ids.shape[-1]
    noise = torch.zeros(clean.sequences, width, weight.shape[-1])
    generator = torch.Generator().manual_seed(spec.seed)
    for position in sorted(set(spec.positions)):
        flat = columns[position]
        noise[flat // width, flat % width] = torch.randn(weight.shape[-1], generator=generator) * spec.scale * std
    return noise.to(weight.device)


def _rows(inputs: dict[str, Any], copies: int) -> dict[str, Any]:
    return {name: value.repeat(copies, *[1] * (value.dim() - 1)) for name, value in inputs.items()}


def _run(loaded: LoadedModel, setup: Setup, copies: Sequence[list[Copy]], heads: int,
         control: TaskControl | None = None, per_batch: int | None = None, verb: str | None = None) -> list[float]:
    """The target probability of each corrupted copy with its own list of copies applied (each built
    for row 0: moved to its row of the batch here), through `engine.run`: one id row per copy,
    `per_batch` copies to a forward (one pass each)."""
    from dataclasses import replace

    import torch

    ids, model = setup.corrupted_inputs["input_ids"].reshape(-1).tolist(), loaded.model
    per_batch = per_batch or _per_batch(setup)

    def forward(batch: engine.Batch) -> Any:
        count = len(batch.rows)
        flat = [replace(item, destination_rows=item.destination_rows + i * setup.sequences)
                for i, r in enumerate(batch.rows.tolist()) for item in copies[r]]
        # one sequence per input: the copies share the corrupted run below their first patch, so that part
        # runs once and is widened into the batch there (a context patch of layer l: at layer l's input)
        widen = min((item.level for item in flat), default=0) if setup.sequences == 1 and count > 1 else None
        inputs = setup.corrupted_inputs if widen is not None else _rows(setup.corrupted_inputs, count)
        with (noised(model, setup.noise) if setup.noise is not None else nullcontext()), \
                patched(model, setup.recording, flat, heads, widen, count):
            return torch.as_tensor(setup.read(model(**inputs))).float()

    found = engine.run(loaded, engine.rows([ids] * len(copies)), forward, control, budget=per_batch * len(ids),
                       max_rows=per_batch, weights=None, progress=verb is not None, verb=verb or "", unit="cells")
    return [float(v) for v in found]


def _index(values: list[int], device: Any) -> Any:
    import torch

    return torch.tensor(values, dtype=torch.long, device=device)


def state_copy(setup: Setup, level: int, pair: tuple[int, int], device: Any) -> Copy:
    """A copy gets the clean state at pair[0] in its position pair[1] (`_run` moves it to its batch row)."""
    (source, destination), width, other = pair, setup.width, setup.corrupted_inputs["input_ids"].shape[-1]
    return Copy(STATE, level, _index([destination // other], device),
                _index([destination % other], device), _index([source // width], device),
                _index([source % width], device))


def context_copy(setup: Setup, layer: int, head: int | None, device: Any) -> Copy:
    """A copy gets head `head`'s (None: every head's) clean context at every pair (`_run` moves it to its
    batch row)."""
    width, other, pairs = setup.width, setup.corrupted_inputs["input_ids"].shape[-1], setup.pairs
    return Copy(CONTEXT, layer, _index([d // other for _, d in pairs], device),
                _index([d % other for _, d in pairs], device), _index([s // width for s, _ in pairs], device),
                _index([s % width for s, _ in pairs], device),
                None if head is None else _index([head] * len(pairs), device))


def _per_batch(setup: Setup) -> int:
    return max(1, BATCH_TOKENS // (setup.sequences * setup.corrupted_inputs["input_ids"].shape[-1]))


def set_up(loaded: LoadedModel, task: str, clean_texts: tuple[str, ...], corrupted_texts: tuple[str, ...] | None,
           target: str | None, noise: Noise | None) -> Setup:
    """Encode both inputs, pair their positions, record the clean run and score both."""
    import torch

    if (corrupted_texts is None) == (noise is None):
        raise InputError("Give a corrupted input, or choose tokens to corrupt with noise.")
    clean = prepare(loaded, task, tuple(clean_texts), target)
    ids = clean.inputs["input_ids"]
    width = ids.shape[-1]
    columns = clean.keep
    differing: tuple[int, ...] = ()
    if noise is not None:
        noise_tensor = _noise(loaded, clean, noise, columns)
        corrupted, read, same = clean, clean.probability, True
        pairs = [(p, p) for p in columns]
        differing = tuple(sorted(set(noise.positions)))
    else:
        assert corrupted_texts is not None
        noise_tensor = None
        other_target = target if target is not None else (None if clean.fixed else str(clean.target))
        try:
            corrupted = prepare(loaded, task, tuple(corrupted_texts), other_target)
        except BertStudioError as error:
            raise InputError(f"The corrupted input: {error.message}", hint=error.hint) from None
        same = tuple(corrupted.inputs["input_ids"].shape) == tuple(ids.shape) and corrupted.keep == clean.keep
        if same:
            read = clean.probability  # the clean answer's own target, at the same positions
            pairs = [(p, p) for p in columns]
            flat_other = corrupted.inputs["input_ids"].reshape(-1).tolist()
            flat_clean = ids.reshape(-1).tolist()
            differing = tuple(i for i, p in enumerate(columns) if flat_clean[p] != flat_other[p])
        else:
            if clean.fixed:  # the target is read at a token position (a mask, an NER token, a QA start)
                raise InputError(
                    f"The two inputs have different token lengths ({len(clean.keep)} vs {len(corrupted.keep)}), "
                    f"and {clean.target_label} is read at one token position, which has no well-defined "
                    "counterpart in the corrupted input.",
                    hint="Edit the input so it keeps its number of tokens (swap one word for another), or "
                         "corrupt tokens with noise.")
            if corrupted.sequences != clean.sequences:
                raise InputError("The corrupted input must have as many parts (choices) as the clean one.")
            read = corrupted.probability
            pairs = _matched(clean, corrupted, width, corrupted.inputs["input_ids"].shape[-1])
    by_clean = dict(pairs)
    counterpart = tuple(by_clean.get(p) for p in columns)
    if not same:
        differing = tuple(i for i, p in enumerate(columns) if by_clean.get(p) is None)
    model = loaded.model
    with exclusive(loaded), recording(model) as seen:
        clean_score = float(torch.as_tensor(clean.probability(model(**clean.inputs)))[0])
    with exclusive(loaded), (noised(model, noise_tensor) if noise_tensor is not None else nullcontext()), \
            recording(model) as own:
        corrupted_score = float(torch.as_tensor(read(model(**corrupted.inputs)))[0])
    shown = tuple(corrupted.tokens[p] for p in corrupted.keep)
    return Setup(clean, corrupted.inputs, shown, read, noise_tensor, pairs, columns, counterpart, differing, same,
                 seen, clean_score, corrupted_score, width, clean.sequences, own)


def states_heatmap(loaded: LoadedModel, setup: Setup, control: TaskControl, share: tuple[float, float] = (0.0, 1.0),
                   batched: bool = True) -> tuple[tuple[float | None, ...], ...]:
    """Every (level, position) of the hidden states; one row per level, Cancel between rows.
    `batched=False` runs every copy as a forward pass of its own (the bench's reference)."""
    found = sites(loaded.model)
    device = loaded.model.device
    counterpart = dict(setup.pairs)
    columns = [p for p in setup.columns if p in counterpart]
    rows = []
    for level in range(found.levels):
        control.check()
        control.report(f"Patching hidden state {level} of {found.layers}",
                       share[0] + (share[1] - share[0]) * level / found.levels)
        values = {p: setup.corrupted_score for p in columns
                  if batched and _unchanged(setup, level, p, counterpart[p])}
        changed = [p for p in columns if p not in values]
        copies = [[state_copy(setup, level, (p, counterpart[p]), device)] for p in changed]
        values.update(zip(changed, _run(loaded, setup, copies, found.heads, control, None if batched else 1),
                          strict=True))
        rows.append(tuple(values.get(p) for p in setup.columns))
    return tuple(rows)


def _unchanged(setup: Setup, level: int, source: int, destination: int) -> bool:
    """The clean state there equals the corrupted one to the bit (an unedited token's embedding): copying
    it changes nothing, so the patched run is the corrupted run and is not run again."""
    import torch

    own = setup.corrupted_recording
    if own is None:
        return False
    other = setup.corrupted_inputs["input_ids"].shape[-1]
    clean = setup.recording.states[level][source // setup.width, source % setup.width]
    return bool(torch.equal(clean, own.states[level][destination // other, destination % other]))


def heads_heatmap(loaded: LoadedModel, setup: Setup, control: TaskControl,
                  share: tuple[float, float] = (0.0, 1.0)) -> tuple[tuple[tuple[float, ...], ...], tuple[float, ...]]:
    """Every (layer, head), then every whole attention layer (all heads at once)."""
    found = sites(loaded.model)
    device = loaded.model.device
    rows = []
    for layer in range(found.layers):
        control.check()
        control.report(f"Patching the heads of layer {layer} of {found.layers - 1}",
                       share[0] + (share[1] - share[0]) * layer / (found.layers + 1))
        copies = [[context_copy(setup, layer, h, device)] for h in range(found.heads)]
        rows.append(tuple(_run(loaded, setup, copies, found.heads, control)))
    control.check()
    copies = [[context_copy(setup, layer, None, device)] for layer in range(found.layers)]
    layers = _run(loaded, setup, copies, found.heads, control)
    return tuple(rows), tuple(layers)


def _notes(setup: Setup, clean: Prepared) -> tuple[notes.Note, ...]:
    found: list[notes.Note] = []
    if not setup.same_length:
        found.append(notes.warning(
            f"The inputs have different token lengths ({len(setup.columns)} vs {len(setup.corrupted_tokens)}): "
            "patching a hidden state position by position is undefined, so the states heatmap is left out. Heads "
            f"and whole attention layers are patched at the {len(setup.pairs)} positions the two inputs share "
            "(the same tokens around the edit); the edited tokens have no counterpart."))
    if abs(setup.clean_score - setup.corrupted_score) < 1e-3:
        found.append(notes.warning(
            f"The corrupted input barely changes {clean.target_label} ({setup.clean_score:.4f} vs "
            f"{setup.corrupted_score:.4f}): there is nothing to restore, so restoration shares are not meaningful."))
    return tuple(found)


def trace(loaded: LoadedModel, task: str, clean_texts: tuple[str, ...],
          corrupted_texts: tuple[str, ...] | None = None, target: str | None = None, *, noise: Noise | None = None,
          method: str = "exact", control: TaskControl | None = None, sample: int = 32) -> PatchResult:
    """Patch every hidden state (same lengths) and every head; `method="attribution"` estimates them
    from one forward and backward pass instead and reports its agreement with exact patching on a
    sample of `sample` cells."""
    control = control or TaskControl()
    if method not in ("exact", "attribution"):
        raise InputError(f"Unknown patching method {method!r}.", hint="Use exact or attribution.")
    if not 0 <= sample <= MAX_SAMPLE:
        raise InputError(f"The sample of cells checked must be 0-{MAX_SAMPLE}, not {sample}.")
    with exclusive(loaded, grad=True):  # the inputs prepared outside inference mode: attribution differentiates
        control.report("Running the clean and corrupted inputs", 0.0)
        setup = set_up(loaded, task, tuple(clean_texts), corrupted_texts, target, noise)
        clean = setup.clean
        agreement, cells = None, 0
        if method == "attribution":
            states, heads, layers = estimate(loaded, setup)
            if setup.same_length:
                agreement, cells = rank_agreement(loaded, setup, states, sample, control)
        else:
            states = states_heatmap(loaded, setup, control, (0.0, 0.7)) if setup.same_length else None
            heads, layers = heads_heatmap(loaded, setup, control, (0.7, 1.0))
        control.report("Patching done", 1.0)
    return PatchResult(
        task=task, target=clean.target, target_label=clean.target_label, clean_score=setup.clean_score,
        corrupted_score=setup.corrupted_score, clean_tokens=tuple(clean.tokens[p] for p in setup.columns),
        corrupted_tokens=setup.corrupted_tokens, differing=setup.differing,
        counterpart=tuple(None if c is None else shown_position(setup, c) for c in setup.counterpart),
        states=states if setup.same_length else None, heads=heads, layers=layers, method=method,
        agreement=agreement, agreement_cells=cells, corruption="noise" if noise is not None else "input",
        same_length=setup.same_length, notes=_notes(setup, clean),
    )


def shown_position(setup: Setup, corrupted_flat: int) -> int:
    """A corrupted flat position as an index into the corrupted tokens shown (padding left out)."""
    import torch

    mask = setup.corrupted_inputs.get("attention_mask")
    if mask is None:
        return corrupted_flat
    kept = torch.as_tensor(mask).reshape(-1).nonzero().flatten().tolist()
    return int(kept.index(corrupted_flat))


def rank_agreement(loaded: LoadedModel, setup: Setup, states: Any, sample: int,
                   control: TaskControl) -> tuple[float | None, int]:
    """Spearman's rho between estimated and exact state cells on a sample: half the largest estimated
    effects, half drawn at random (seeded), patched exactly in batches."""
    import numpy as np

    counterpart = dict(setup.pairs)
    cells = [(level, column) for level, row in enumerate(states) for column, value in enumerate(row)
             if value is not None]
    if not cells or sample < 3:
        return None, 0
    effect = np.array([abs(states[level][column] - setup.corrupted_score) for level, column in cells])
    top = list(np.argsort(-effect, kind="stable")[: sample // 2])
    rest = np.setdiff1d(np.arange(len(cells)), top)
    drawn = np.random.default_rng(AGREEMENT_SEED).permutation(rest)[: sample - len(top)]
    chosen = [cells[int(i)] for i in [*top, *drawn]]
    device = loaded.model.device
    flat = [(level, setup.columns[column]) for level, column in chosen]
    copies = [[state_copy(setup, level, (p, counterpart[p]), device)] for level, p in flat]
    exact = _run(loaded, setup, copies, sites(loaded.model).heads, Share(control, 0.5, 1.0, "Checking the estimate: "),
                 verb="patched exactly")
    estimated = [states[level][column] for level, column in chosen]
    return spearman(estimated, exact), len(chosen)

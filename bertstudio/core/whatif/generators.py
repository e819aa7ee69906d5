"""Word proposals for a counterfactual search, and the batched scoring of edited inputs.

- `mlm`: a masked LM fills each word's place (the word masked); its most likely whole words.
- `hotflip`: HotFlip (Ebrahimi et al. 2018): the first-order change of the explained probability
  when a word's first token embedding e_i is swapped for a vocabulary entry's e_w, (e_w - e_i) . g_i
  with g_i the gradient at that token; the entries that lower it most.
- `ablation`: the word removed.
Proposals are made once on the original input; the search scores their combinations exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.whatif.edits import Word, cased, word_ids, word_text

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import CounterfactualAdapter

METHODS = ("mlm", "hotflip", "ablation")
BATCH = 16  # rows per forward pass: small enough that Cancel lands between two within a second


def encode(loaded: LoadedModel, texts: tuple[str, ...], choices: bool) -> Any:
    """(model inputs on the device, the tokenizer's encoding with offsets) of one input, shaped as the task
    reads it: one sequence (a text and its pair), or the prompt paired with each ending (1 x choices x tokens)."""
    from bertstudio.core import engine

    options: dict[str, Any] = {"padding": True, "truncation": True, "max_length": loaded.info.max_length,
                               "return_tensors": "pt", "return_offsets_mapping": True}
    if choices:
        encoding = loaded.tokenizer([texts[0]] * (len(texts) - 1), list(texts[1:]), **options)
    else:
        encoding = loaded.tokenizer([texts[0]], [texts[1]] if len(texts) > 1 else None, **options)
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in encoding]
    inputs = engine.on_device(loaded.model, {n: encoding[n] for n in names})
    if choices:
        inputs = {n: v.view(1, len(texts) - 1, -1) for n, v in inputs.items()}
    return inputs, encoding


def ablation(words: list[Word], per_word: int) -> dict[Word, list[str]]:
    return {word: [""] for word in words}


def hotflip(loaded: LoadedModel, adapter: CounterfactualAdapter, texts: tuple[str, ...], words: list[Word],
            index: int, per_word: int, control: TaskControl) -> dict[Word, list[str]]:
    """The `per_word` whole-word entries whose swap lowers P(original) most, to first order."""
    import torch

    from bertstudio.core import engine

    inputs, encoding = encode(loaded, texts, adapter.choices)
    layer: Any = loaded.model.get_input_embeddings()
    with engine.exclusive(loaded, grad=True) as model:
        embeds = layer(inputs["input_ids"]).detach().requires_grad_(True)
        others = {n: v for n, v in inputs.items() if n != "input_ids"}
        outputs = model(inputs_embeds=embeds, **others)
        target = adapter.probabilities(loaded, inputs, outputs)[0, index]
        (gradient,) = torch.autograd.grad(target, embeds)
    control.check()
    width = inputs["input_ids"].shape[-1]
    gradient = gradient.reshape(-1, width, gradient.shape[-1]).float()
    ids = inputs["input_ids"].reshape(-1, width)
    spans = [list(zip(encoding.sequence_ids(r), encoding["offset_mapping"][r].tolist(), strict=True))
             for r in range(ids.shape[0])]
    located: list[tuple[Word, int, Any]] = []  # (word, its first token's id, the gradient there, summed over rows)
    for word in words:
        sequence = 0 if adapter.choices else word.part  # a prompt is sequence 0 of every choice's row
        g, first = torch.zeros_like(gradient[0, 0]), None
        for row, tokens in enumerate(spans):
            t = next((t for t, (seq, (a, b)) in enumerate(tokens)
                      if seq == sequence and a >= word.start and b <= word.end and b > a), None)
            if t is not None:
                g, first = g + gradient[row, t], int(ids[row, t])
        if first is not None:  # None: cut off by the model's length
            located.append((word, first, g))
    if not located:
        return {}
    table = layer.weight.detach().float()
    allowed = fitted(word_ids(loaded), table.shape[0]).to(table.device)
    gradients = torch.stack([g for _, _, g in located], dim=1)  # hidden x words
    change = table @ gradients  # (e_w . g) for every entry w and word: one product for all words
    found: dict[Word, list[str]] = {}
    for column, (word, first, _g) in enumerate(located):
        control.check()
        scores = change[:, column] - change[first, column]  # (e_w - e_i) . g
        scores[~allowed] = float("inf")
        scores[first] = float("inf")
        found[word] = _words(loaded, scores.topk(min(per_word * 2, scores.numel()), largest=False).indices, word,
                             per_word)
    return found


def fitted(allowed: Any, size: int) -> Any:
    """The whole-word mask over `size` rows (a model's embedding table may be longer than its vocabulary)."""
    import torch

    out = torch.zeros(size, dtype=torch.bool)
    n = min(size, allowed.shape[0])
    out[:n] = allowed[:n]
    return out


def _words(loaded: LoadedModel, ids: Any, word: Word, per_word: int) -> list[str]:
    """Distinct proposals written as text, the original word left out."""
    out: list[str] = []
    for token_id in ids.tolist():
        text = cased(loaded, word.text, word_text(loaded, int(token_id)))
        if text and text.lower() != word.text.lower() and text not in out:
            out.append(text)
        if len(out) == per_word:
            break
    return out


def mlm(proposer: LoadedModel, texts: tuple[str, ...], words: list[Word], per_word: int,
        control: TaskControl) -> dict[Word, list[str]]:
    """What the masked LM `proposer` puts in each word's place (the word masked, its own text read alone):
    every masked text through the batch engine, the logits at its mask read back."""
    import torch

    from bertstudio.core import engine

    tokenizer = proposer.tokenizer
    mask = str(tokenizer.mask_token)
    allowed = word_ids(proposer)
    masked = [texts[w.part][:w.start] + mask + texts[w.part][w.end:] for w in words]
    encoded = engine.encode_all(proposer, masked, control=control)
    at: list[int | None] = []  # the word's mask in each row: after the masks already in the text (fill-mask's own)
    for row, (word, text) in enumerate(zip(words, masked, strict=True)):
        masks = [t for t, token in enumerate(encoded.input_ids[row]) if token == tokenizer.mask_token_id]
        before = text[:word.start].count(mask)
        at.append(masks[before] if before < len(masks) else None)  # None: cut off by the model's length
    model = proposer.model

    def forward(batch: engine.Batch) -> Any:
        logits, positions = model(**batch.inputs).logits, [at[row] or 0 for row in batch.rows.tolist()]
        return logits[torch.arange(len(positions), device=logits.device), positions]

    control.report("Proposing words…", 0.0)
    rows = engine.run(proposer, encoded, forward, control, max_rows=BATCH, progress=False)
    found: dict[Word, list[str]] = {}
    for word, position, logits in zip(words, at, rows, strict=True):
        if position is None:
            continue
        scores = torch.from_numpy(logits).clone()
        scores[~fitted(allowed, scores.shape[0])] = float("-inf")
        top = scores.topk(min(per_word * 2 + 1, scores.numel())).indices
        found[word] = _words(proposer, top, word, per_word)
    control.report(f"Proposed words for {len(words)} words", 0.1)
    return found

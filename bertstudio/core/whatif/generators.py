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


def encode(loaded: LoadedModel, batch: list[tuple[str, ...]], choices: bool, offsets: bool = False) -> Any:
    """(model inputs, the tokenizer's encoding) for a batch of the task's texts, shaped as the task reads
    them: one sequence (a text and its pair), or the prompt paired with each ending (batch x choices x tokens)."""
    tokenizer = loaded.tokenizer
    options: dict[str, Any] = {"padding": True, "truncation": True, "max_length": loaded.info.max_length,
                               "return_tensors": "pt", "return_offsets_mapping": offsets}
    if choices:
        endings = len(batch[0]) - 1
        encoding = tokenizer([t[0] for t in batch for _ in t[1:]], [e for t in batch for e in t[1:]], **options)
    elif len(batch[0]) > 1:
        endings = 0
        encoding = tokenizer([t[0] for t in batch], [t[1] for t in batch], **options)
    else:
        endings = 0
        encoding = tokenizer([t[0] for t in batch], **options)
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in encoding]
    device = loaded.model.device
    inputs = {n: encoding[n].to(device) for n in names}
    if endings:
        inputs = {n: v.view(len(batch), endings, -1) for n, v in inputs.items()}
    return inputs, encoding


def score(loaded: LoadedModel, adapter: CounterfactualAdapter, batch: list[tuple[str, ...]],
          index: int) -> tuple[list[int], list[float]]:
    """Per row: the predicted class and the probability of class `index` (the original prediction)."""
    import torch

    inputs, _ = encode(loaded, batch, adapter.choices)
    with torch.inference_mode():
        probabilities = adapter.probabilities(loaded, inputs, loaded.model(**inputs)).float()
    return probabilities.argmax(-1).tolist(), probabilities[:, index].tolist()


def ablation(words: list[Word], per_word: int) -> dict[Word, list[str]]:
    return {word: [""] for word in words}


def hotflip(loaded: LoadedModel, adapter: CounterfactualAdapter, texts: tuple[str, ...], words: list[Word],
            index: int, per_word: int, control: TaskControl) -> dict[Word, list[str]]:
    """The `per_word` whole-word entries whose swap lowers P(original) most, to first order."""
    import torch

    inputs, encoding = encode(loaded, [texts], adapter.choices, offsets=True)
    layer: Any = loaded.model.get_input_embeddings()
    with torch.inference_mode(False), torch.enable_grad():
        embeds = layer(inputs["input_ids"]).detach().requires_grad_(True)
        others = {n: v for n, v in inputs.items() if n != "input_ids"}
        outputs = loaded.model(inputs_embeds=embeds, **others)
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
    """What the masked LM `proposer` puts in each word's place (the word masked, its own text read alone)."""
    import torch

    tokenizer = proposer.tokenizer
    mask = str(tokenizer.mask_token)
    allowed = word_ids(proposer)
    found: dict[Word, list[str]] = {}
    for start in range(0, len(words), BATCH):
        control.check()
        chunk = words[start:start + BATCH]
        masked = [texts[w.part][:w.start] + mask + texts[w.part][w.end:] for w in chunk]
        with proposer.lock, torch.inference_mode():
            encoded = tokenizer(masked, padding=True, truncation=True, max_length=proposer.info.max_length,
                                return_tensors="pt").to(proposer.model.device)
            logits = proposer.model(**encoded).logits.float()
        for row, (word, text) in enumerate(zip(chunk, masked, strict=True)):
            before = text[:word.start].count(mask)  # masks already in the text (fill-mask's own)
            where = (encoded["input_ids"][row] == tokenizer.mask_token_id).nonzero().flatten().tolist()
            if before >= len(where):
                continue  # cut off by the model's length
            scores = logits[row, where[before]].clone()
            scores[~fitted(allowed, scores.shape[0]).to(scores.device)] = float("-inf")
            top = scores.topk(min(per_word * 2 + 1, scores.numel())).indices
            found[word] = _words(proposer, top, word, per_word)
        control.report(f"Proposing words {min(start + BATCH, len(words))} of {len(words)}",
                       min(start + BATCH, len(words)) / max(len(words), 1) * 0.1)
    return found

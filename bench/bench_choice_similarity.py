"""Multiple choice and similarity vs the bare model forward: same model, same input, timed alternately.

Neither has a transformers pipeline, so raw is what any code must do: tokenize, one forward, the
softmax over the endings (multiple choice) or mean pooling and the cosines (similarity). Small:
MiniLM (its choice head is random: latency does not care); base: the BERT-base-sized checkpoints.
"""

from __future__ import annotations

from pathlib import Path

from common import BENCH_CACHE, MODELS, Row, bert_base, interleaved, sizes

PROMPT = "She opened the fridge and"
ENDINGS = ["took out the milk.", "flew to the moon.", "painted the sky green.", "sang to the fish."]
SENTENCES = ["A man is playing a guitar.", "Someone plays an instrument.", "A chef is cooking pasta.",
             "The stock market fell today.", "A person strums a guitar on stage."]


def _minilm_choice() -> Path:
    """MiniLM with a (random) multiple-choice head, saved once beside the BERT-base checkpoints."""
    folder = BENCH_CACHE / "minilm-MultipleChoice"
    if not (folder / "config.json").is_file():
        from transformers import AutoModelForMultipleChoice, AutoTokenizer

        AutoModelForMultipleChoice.from_pretrained(MODELS / "all-minilm-l6-v2").save_pretrained(folder)
        AutoTokenizer.from_pretrained(MODELS / "all-minilm-l6-v2").save_pretrained(folder)
    return folder


def rows() -> list[Row]:
    out: list[Row] = []
    if "small" in sizes():
        out += _rows("", _minilm_choice(), MODELS / "all-minilm-l6-v2", 30)
    if "base" in sizes():
        out += _rows("bert-base-sized ", bert_base("MultipleChoice"), bert_base("Model"), 12)
    return out


def _rows(size: str, choice_folder: Path, encoder_folder: Path, repeats: int) -> list[Row]:
    import torch

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.multiple_choice import predict
    from bertstudio.core.tasks.similarity import SimilarityInput, run

    loaded = load_model(LoadRequest(str(choice_folder), "multiple-choice"))
    tokenizer, model = loaded.tokenizer, loaded.model

    def bare_choice() -> object:
        encoded = tokenizer([PROMPT] * len(ENDINGS), ENDINGS, padding=True, return_tensors="pt")
        with torch.inference_mode():
            return torch.softmax(model(**{k: v.unsqueeze(0) for k, v in encoded.items()}).logits[0], -1).tolist()

    ours, raw = interleaved(lambda: predict(loaded, PROMPT, ENDINGS), bare_choice, repeats)
    out = [Row(f"{size}multiple choice, {len(ENDINGS)} endings", ours, raw, "vs bare forward + softmax")]

    encoder = load_model(LoadRequest(str(encoder_folder), "similarity"))
    inputs = SimilarityInput(SENTENCES[0], tuple(SENTENCES[1:]))

    def bare_similarity() -> object:
        encoded = encoder.tokenizer(SENTENCES, padding=True, truncation=True, return_tensors="pt")
        with torch.inference_mode():
            hidden = encoder.model(**encoded).last_hidden_state
            mask = encoded["attention_mask"].unsqueeze(-1).float()
            unit = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)
            return (unit @ unit.T).tolist()

    ours, raw = interleaved(lambda: run(encoder, inputs, TaskControl()), bare_similarity, repeats)
    out.append(Row(f"{size}similarity, A vs {len(SENTENCES) - 1} B's", ours, raw,
                   "vs bare forward + mean pooling + cosines"))
    return out

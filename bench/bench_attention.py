"""Attention: forward pass (ours vs raw output_attentions), grid drawn at 128/512 tokens, head switch,
`attention --out` and `--norms` at 512 tokens (export_rows; `python bench_attention.py --export` runs only them).

A bert-base-sized random checkpoint (12 layers x 12 heads, hidden 768) with a small vocabulary
is built in a temp dir, so timings need no download.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from common import Row, interleaved, median_time


def _checkpoint(folder: Path) -> Path:
    from transformers import BertConfig, BertModel, BertTokenizer

    words = "the cat sat on mat dog ran fast big small house tree water book".split()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    # transformers 5's BertTokenizer ignores vocab_file= (5 special tokens only): give the vocabulary itself
    BertTokenizer(vocab={token: i for i, token in enumerate(vocab)}, model_max_length=512).save_pretrained(folder)
    BertModel(BertConfig(vocab_size=len(vocab))).eval().save_pretrained(folder)
    return folder


def _text(tokens: int) -> str:
    words = "the cat sat on mat dog ran fast big small house tree water book".split()
    return " ".join(words[i % len(words)] for i in range(tokens - 2))


def rows() -> list[Row]:
    import torch
    from PySide6.QtWidgets import QApplication

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.attention import compute

    app = QApplication.instance() or QApplication([])
    from bertstudio.core.tasks.attention.bundle import grid_stage, make_bundle
    from bertstudio.ui.widgets.attention_grid import AttentionGrid
    from bertstudio.ui.widgets.attention_head_view import HeadView
    from bertstudio.ui.widgets.attention_heatmap import AttentionHeatmap

    out: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = _checkpoint(Path(tmp))
        loaded = load_model(LoadRequest(str(folder), "attention", attn_implementation="eager"))
        grid, heatmap, head_view = AttentionGrid(), AttentionHeatmap(), HeadView()
        grid.resize(1200, 1000)
        heatmap.resize(1000, 900)
        head_view.resize(1000, 650)
        for widget in (grid, heatmap, head_view):
            widget.show()
        app.processEvents()
        for tokens in (128, 512):
            text = _text(tokens)
            encoding = loaded.tokenizer(text, return_tensors="pt")
            assert encoding["input_ids"].shape[1] == tokens

            def raw() -> object:
                with torch.inference_mode():
                    return loaded.model(**encoding, output_attentions=True).attentions  # noqa: B023 - called within this iteration

            repeats = 10 if tokens == 128 else 4
            ours_s, raw_s = interleaved(lambda: compute(loaded, text), raw, repeats=repeats)  # noqa: B023 - called within this iteration
            out.append(Row(f"attention forward {tokens} tok (12x12)", ours_s, raw_s,
                           "compute() incl. tokenise + numpy copy vs model(output_attentions=True)"))
            result = compute(loaded, text)
            cell_max = grid.cell_pixels(12, 13)
            labels = [f"H{h}" for h in range(12)] + ["mean"]

            def draw_grid() -> None:
                # what the tab does between forward-done and the grid on screen: pool the raw
                # attentions into cells (worker), tile and upload one image (GUI), render
                stage = grid_stage(result, cell_max)  # noqa: B023 - called within this iteration
                grid.set_cells(stage.thumbnails, labels)  # noqa: B023 - called within this iteration
                grid.grab()  # forces a full render of the scene

            stage_s = median_time(lambda: grid_stage(result, cell_max), repeats=5, warmup=1)  # noqa: B023
            cells = grid_stage(result, cell_max).thumbnails

            def gui_only() -> None:
                grid.set_cells(cells, labels)  # noqa: B023 - called within this iteration
                grid.grab()

            gui_s = median_time(gui_only, repeats=5, warmup=1)
            draw_s = median_time(draw_grid, repeats=5, warmup=1)
            out.append(Row(f"grid drawn {tokens} tok (144 heads+means)", draw_s, raw_s,
                           f"target {'150 ms' if tokens == 128 else '1 s'}: worker cells {stage_s * 1000:.0f} ms "
                           f"(pooled to {cell_max} px), GUI tile+draw {gui_s * 1000:.0f} ms (medians apart); "
                           "ratio vs the raw forward pass"))
            stage = grid_stage(result, cell_max)
            after_s = median_time(lambda: make_bundle(result, cell_max, stage), repeats=3, warmup=1)  # noqa: B023
            out.append(Row(f"after the grid: layer means+rollout+stats {tokens} tok", after_s, raw_s,
                           "worker, while the grid is already on screen"))
            tokens_list = list(result.tokens)
            heads = iter(range(10**9))

            def switch() -> None:
                i = next(heads) % 144  # noqa: B023 - called within this iteration
                heatmap.set_matrix(result.attentions[i // 12, i % 12], tokens_list, tokens_list, f"head {i}")  # noqa: B023 - called within this iteration
                heatmap.grab()

            out.append(Row(f"detail head switch {tokens} tok", median_time(switch, repeats=10, warmup=2), None,
                           "target 30 ms"))
            out.extend(_head_view_rows(head_view, tokens_list))
        for widget in (grid, heatmap, head_view):
            widget.close()
        out.extend(export_rows(loaded, Path(tmp)))
    return out


def export_rows(loaded: object, folder: Path, tokens: int = 512, repeats: int = 5) -> list[Row]:
    """What `attention --out FILE.npz` does (forward, numpy copy, plain savez through a .partial
    file) vs a plain forward + np.savez of the stacked attentions; and `--norms` (the same
    forward with value hooks, the Gram matrices and the layers x heads x T x T norms) vs the
    plain attention forward. Both at 512 tokens on the BERT-base-sized checkpoint."""
    import numpy as np
    import torch

    from bertstudio.core.tasks.attention import compute
    from bertstudio.core.tasks.attention.export import save

    text = _text(tokens)
    encoding = loaded.tokenizer(text, return_tensors="pt")  # type: ignore[attr-defined]
    model = loaded.model  # type: ignore[attr-defined]
    ours_file, raw_file = folder / "ours.npz", folder / "raw.npz"

    def raw_forward() -> np.ndarray:
        with torch.inference_mode():
            attentions = model(**encoding, output_attentions=True).attentions
        return torch.stack([a[0] for a in attentions]).numpy()

    # Both sides write a new file: replacing an existing 144 MiB file costs ~0.4 s here for freeing
    # its blocks, which our atomic rename pays at once and np.savez's in-place truncate pays later.
    def raw_out() -> None:
        raw_file.unlink(missing_ok=True)
        np.savez(raw_file, attentions=raw_forward())

    def ours_out() -> None:
        ours_file.unlink(missing_ok=True)
        save(ours_file, compute(loaded, text))  # type: ignore[arg-type]

    def ours_norms() -> None:  # what `attention --norms` computes: the per-head norms
        result = compute(loaded, text, norms=True)  # type: ignore[arg-type]
        assert result.norms is not None

    out_s, raw_out_s = interleaved(ours_out, raw_out, repeats=repeats)
    norms_s, forward_s = interleaved(ours_norms, raw_forward, repeats=repeats)
    size = ours_file.stat().st_size / 2**20
    return [
        Row(f"attention --out .npz {tokens} tok", out_s, raw_out_s,
            f"target <= 1.05x forward + np.savez ({size:.0f} MiB, not compressed; --compress to compress)"),
        Row(f"attention --norms {tokens} tok", norms_s, forward_s,
            "target <= 1.3x the plain attention forward: value hooks, ||f_h(x_j)||, the per-head norms"),
    ]


def _head_view_rows(head_view: object, tokens: list[str]) -> list[Row]:
    """Head view steps on the GUI thread: set_heads, each incremental line-finding turn, a paint.

    A random checkpoint attends almost uniformly (no line reaches 0.02), so the matrices are
    peaked ones (softmax of 4 x normal noise: ~20 keys per query above 0.02, like real heads)."""
    import time

    import numpy as np

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(12, len(tokens), len(tokens))).astype(np.float32) * 4
    peaked = np.exp(logits - logits.max(-1, keepdims=True))
    peaked /= peaked.sum(-1, keepdims=True)
    rows = []
    for shown in (1, 12):
        steps = []
        for repeat in range(4):
            start = time.perf_counter()
            head_view.set_heads(tokens, tokens, [(h, peaked[(h + repeat) % 12]) for h in range(shown)])
            steps.append(time.perf_counter() - start)
            while not head_view.complete:
                start = time.perf_counter()
                head_view._build_some()
                steps.append(time.perf_counter() - start)
        paint_s = median_time(head_view.grab, repeats=5, warmup=1)
        rows.append(Row(f"head view {shown} head(s) {len(tokens)} tok", max(max(steps), paint_s), None,
                        f"target 50 ms per GUI step: longest step {max(steps) * 1000:.0f} ms "
                        f"({len(steps) // 4} step(s)), paint {paint_s * 1000:.0f} ms "
                        f"({head_view.drawn[0]:,} of {head_view.drawn[1]:,} lines in view drawn)"))
    return rows


if __name__ == "__main__":
    import sys

    if "--export" in sys.argv:
        from bertstudio.core.models import LoadRequest, load_model

        with tempfile.TemporaryDirectory() as tmp:
            checkpoint = _checkpoint(Path(tmp))
            for row in export_rows(load_model(LoadRequest(str(checkpoint), "attention", attn_implementation="eager")),
                                   Path(tmp)):
                print(row, f"ratio {row.ratio:.3f}")
    else:
        for row in rows():
            print(row)

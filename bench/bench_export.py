"""ONNX export (core/export): onnxruntime against PyTorch float32 and PyTorch dynamic int8 on the CPU,
in the same run, on MiniLM and on a BERT-base-sized checkpoint (classification head; timings do not
depend on whether the head is trained). `ours` is onnxruntime (or int8), `raw` PyTorch float32, so a
ratio below 1 is a speed-up. onnxruntime gets the same thread count as torch (common.threads()).
`python bench/bench_export.py` prints the rows alone.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

from common import MODELS, Row, bert_base, interleaved, sizes, threads

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "datasets" / "reviews_eval.csv"


def _texts() -> list[str]:
    with DEMO.open(encoding="utf-8") as handle:
        return [row["text"] for row in csv.DictReader(handle)]


def _runtimes(folder: Path, onnx_path: Path) -> tuple[object, object, float, float]:
    """(tokenizer, run functions per runtime, export's largest difference, file MB) for one model."""
    import copy

    import onnxruntime
    import torch

    from bertstudio.core.export.onnx import export_onnx
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.quantize import quantize_int8
    from bertstudio.core.tasks.spec import all_specs

    task = next(s.key for s in all_specs().values() if s.model_class == "AutoModelForSequenceClassification")
    result = export_onnx(str(folder), task, onnx_path, speed=False)
    loaded = load_model(LoadRequest(str(folder), task, attn_implementation="eager"))
    float32 = load_model(LoadRequest(str(folder), task)).model  # the app's own (sdpa) float32 model
    int8, _ = quantize_int8(copy.deepcopy(float32))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads()
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no spinning: torch runs next
    session = onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])

    def runs(encoded: dict) -> dict[str, object]:
        feed = {item.name: encoded[item.name].numpy() for item in session.get_inputs()}

        def torch_run(model: object) -> object:
            def run() -> object:
                with torch.inference_mode():
                    return model(**encoded)  # type: ignore[operator]
            return run

        return {"onnxruntime": lambda: session.run(None, feed), "pytorch": torch_run(float32),
                "int8": torch_run(int8)}

    return loaded.tokenizer, runs, result.max_difference, result.size_mb


def rows() -> list[Row]:
    sys.path.insert(0, str(ROOT))
    texts = _texts()
    inputs = {"32 reviews": texts[:32], "8 x 128 tokens": [" ".join(texts[i:i + 10]) for i in range(0, 80, 10)]}
    models = []
    if "small" in sizes():
        models.append(("MiniLM", MODELS / "all-minilm-l6-v2"))
    if "base" in sizes():
        models.append(("BERT-base-sized", bert_base("SequenceClassification", ("negative", "positive"))))
    found: list[Row] = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, folder in models:
            tokenizer, runs, difference, mb = _runtimes(folder, Path(scratch) / f"{name}.onnx")
            for label, batch in inputs.items():
                encoded = tokenizer(batch, padding=True, truncation=True, max_length=128,  # type: ignore[operator]
                                    return_tensors="pt")
                run = runs(encoded)  # type: ignore[operator]
                ort, torch32 = interleaved(run["onnxruntime"], run["pytorch"], repeats=10)
                found.append(Row(f"onnxruntime vs PyTorch, {name}, {label}", ort, torch32,
                                 f"{mb:.0f} MB .onnx, largest difference {difference:.1e}"))
                int8, torch32b = interleaved(run["int8"], run["pytorch"], repeats=10)
                found.append(Row(f"int8 vs PyTorch, {name}, {label}", int8, torch32b,
                                 f"int8 time / onnxruntime time: {int8 / ort:.2f}"))
    return found


if __name__ == "__main__":
    for row in rows():
        print(f"{row.name:<52} ours {row.ours * 1000:8.1f} ms  PyTorch {row.raw * 1000:8.1f} ms  "  # type: ignore[operator]
              f"speed-up x{row.raw / row.ours:.2f}  {row.note}")  # type: ignore[operator]

"""The models folder lists at once from config.json (issue 29 #23: the list stayed empty for 20 s on a
busy machine while transformers was imported); what each folder supports is judged after."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_glancing_needs_no_transformers_and_judging_fills_the_tasks(real_models) -> None:  # noqa: ANN001
    folder = str(Path(real_models["categorium-bert-tiny-topics-en"]).parent)
    code = ("import sys; from pathlib import Path; from bertstudio.core.catalog import list_local_models; "
            f"found = list_local_models(Path({folder!r}), judge=False); "
            "assert 'transformers' not in sys.modules and 'torch' not in sys.modules, 'imported'; "
            "print(sorted((m.name, m.architecture, m.judged, m.tasks) for m in found))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "('categorium-bert-tiny-topics-en', 'BertForSequenceClassification', False, ())" in done.stdout

    from bertstudio.core.catalog import list_local_models

    judged = {m.name: m for m in list_local_models(Path(folder))}
    assert judged["categorium-bert-tiny-topics-en"].judged
    assert "classification" in judged["categorium-bert-tiny-topics-en"].tasks

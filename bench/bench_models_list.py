"""The model list costs nothing (issue 39.5): `bertstudio models` over 100 model folders (links to the
test models' files: real configs and safetensors headers) as a fresh process, against a bare
`import torch, transformers`, twice each, alternately. Target: ours < the bare import.

    python bench/run.py models_list
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import MODELS, Row

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = 100


def _folders(root: Path) -> Path:
    sources = sorted(p for p in MODELS.iterdir() if (p / "config.json").is_file())
    for i in range(FOLDERS):
        folder = root / f"model-{i:03d}"
        folder.mkdir(parents=True)
        for item in sources[i % len(sources)].iterdir():
            (folder / item.name).symlink_to(item)
    return root


def _seconds(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed: {done.stderr[-1500:]}")
    return time.perf_counter() - started


def rows() -> list[Row]:
    models = _folders(Path(tempfile.mkdtemp(prefix="bench-models-")) / "models")
    ours, bare = [], []
    for _ in range(2):
        ours.append(_seconds(["-m", "bertstudio", "models", "--models-dir", str(models)]))
        bare.append(_seconds(["-c", "import torch, transformers"]))
    return [Row(f"bertstudio models over {FOLDERS} folders (a fresh process)", min(ours), min(bare),
                "raw = a bare `import torch, transformers`; target: ratio < 1")]


if __name__ == "__main__":
    for row in rows():
        print(f"{row.name}: ours {row.ours:.2f} s, raw {row.raw or 0:.2f} s, ratio {row.ratio:.2f}")

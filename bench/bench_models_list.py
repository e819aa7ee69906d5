"""The model list costs nothing (issue 39.5): `bertstudio models` over 100 model folders (links to the
test models' files: real configs and safetensors headers) as a fresh process, against a bare
`import torch, transformers`, twice each, alternately. Target: ours < the bare import.

    python bench/run.py models_list
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench_whole_process import run_once
from common import MODELS, Row

FOLDERS = 100


def _folders(root: Path) -> Path:
    sources = sorted(p for p in MODELS.iterdir() if (p / "config.json").is_file())
    for i in range(FOLDERS):
        folder = root / f"model-{i:03d}"
        folder.mkdir(parents=True)
        for item in sources[i % len(sources)].iterdir():
            (folder / item.name).symlink_to(item)
    return root


def rows() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-models-") as scratch:
        models = _folders(Path(scratch) / "models")
        ours, bare = [], []
        for _ in range(2):
            ours.append(run_once(["-m", "bertstudio", "models", "--models-dir", str(models)])[0])
            bare.append(run_once(["-c", "import torch, transformers"])[0])
    return [Row(f"bertstudio models over {FOLDERS} folders (a fresh process)", min(ours), min(bare),
                "raw = a bare `import torch, transformers`; target: ratio < 1")]


if __name__ == "__main__":
    for row in rows():
        print(f"{row.name}: ours {row.ours:.2f} s, raw {row.raw or 0:.2f} s, ratio {row.ratio:.2f}")

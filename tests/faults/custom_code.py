"""A models folder with checkpoints that need custom code (which BERT Studio never runs)."""

from __future__ import annotations

import json
from pathlib import Path


def custom_code_models_dir(root: Path, bert: Path) -> Path:
    """`root` with a normal BERT, one of an unknown model_type and one with auto_map on a custom type."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "bert").symlink_to(bert, target_is_directory=True)
    for name, config in (("alien", {"model_type": "alien-net", "architectures": ["AlienModel"]}),
                         ("remote", {"model_type": "remote-bert", "architectures": ["RemoteBert"],
                                     "auto_map": {"AutoModel": "modeling_remote.RemoteBert"}})):
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(config))
        (root / name / "modeling_remote.py").write_text("raise SystemExit('custom code ran')\n")
    return root

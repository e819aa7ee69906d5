"""`bertstudio train --merge ADAPTER_DIR --output DIR`: a LoRA adapter folder merged into a plain model.

`train`'s other required options are checked here rather than by argparse, so `--merge` needs
none of them and a missing one is still one clear line (exit 1), never a usage traceback.
"""

from __future__ import annotations

import argparse
import sys

from bertstudio.core.errors import InputError
from bertstudio.core.json_values import dumps

MERGE_HELP = "merge the LoRA adapter folder ADAPTER_DIR into its base and write a plain model to --output"


def add_merge(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--merge", metavar="ADAPTER_DIR", default=None, help=MERGE_HELP)


def check_required(args: argparse.Namespace, required: list[tuple[str, str]]) -> None:
    """(dest, flag) pairs every training run needs; refused together with --merge's alternative."""
    missing = [flag for dest, flag in required if getattr(args, dest, None) in (None, "")]
    if missing:
        raise InputError(f"train needs {', '.join(missing)}.",
                         hint="Or merge a LoRA adapter: bertstudio train --merge ADAPTER_DIR --output DIR.")


def merge(args: argparse.Namespace) -> int:
    from bertstudio.core.progress import ProgressEvent, TaskControl
    from bertstudio.core.training.lora import merge_folder

    if not args.output_dir:
        raise InputError("--merge needs --output DIR: the new folder the merged model is written to.")

    def show(event: ProgressEvent) -> None:
        if event.message and not args.json:
            print(event.message, file=sys.stderr, flush=True)

    folder = merge_folder(args.merge, args.output_dir, TaskControl(on_progress=show))
    if args.json:
        print(dumps({"event": "merged", "adapter": args.merge, "output_dir": str(folder)}), flush=True)
    else:
        print(f"merged {args.merge} into {folder}")
    return 0

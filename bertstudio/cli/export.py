"""bertstudio export --model SRC --task TASK --format onnx --output FILE.onnx [--json]: a model with
its task head as ONNX, validated against PyTorch with onnxruntime (largest difference printed) and
timed beside PyTorch and int8 on the CPU."""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli.common import print_json, stderr_control

FORMATS = ("onnx",)


def task_names() -> list[str]:
    """What --task accepts: every exportable task's key and its CLI name ("classify")."""
    from bertstudio.core.export.onnx import exportable_tasks
    from bertstudio.core.tasks.spec import spec_for

    names: list[str] = []
    for key in exportable_tasks():
        names += [name for name in dict.fromkeys((key, spec_for(key).cli_name)) if name not in names]
    return names


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction (no public name)
    parser = subparsers.add_parser(
        "export", help="write a model with its task head as ONNX, validated against PyTorch with onnxruntime")
    parser.add_argument("--model", required=True, metavar="SRC", help="Hub id or local model folder")
    parser.add_argument("--task", required=True, choices=task_names(), metavar="TASK",
                        help="the head to export: " + ", ".join(task_names()))
    parser.add_argument("--format", default="onnx", choices=FORMATS, help="file format (default: onnx)")
    parser.add_argument("--output", required=True, metavar="FILE.onnx", help="the file to write (atomically)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing FILE.onnx")
    parser.add_argument("--no-speed", dest="speed", action="store_false",
                        help="skip timing onnxruntime vs PyTorch vs int8 (validation still runs)")
    parser.add_argument("--int8", action="store_true",
                        help="also write FILE-int8.onnx beside it: dynamically quantized by onnxruntime, for "
                             "--runtime onnx (smaller, faster on the CPU; predictions close, not equal)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bertstudio.core.export.onnx import export_onnx
    from bertstudio.core.tasks.spec import spec_for_command

    task = spec_for_command(args.task).key
    if args.int8:
        from bertstudio.core.errors import InputError
        from bertstudio.core.export.onnx_int8 import int8_path

        quantized = int8_path(Path(args.output).expanduser())
        if quantized.exists() and not args.overwrite:  # refused before minutes of exporting
            raise InputError(f"'{quantized}' exists already; it was not replaced.",
                             hint="Add --overwrite to replace it, or choose another --output.")
    result = export_onnx(args.model, task, args.output, stderr_control(), speed=args.speed,
                         overwrite=args.overwrite)
    int8 = None
    if args.int8:
        from bertstudio.core.export.onnx_int8 import quantize_onnx

        int8 = quantize_onnx(Path(result.path), overwrite=args.overwrite)
    if args.json:
        print_json({**result.to_json(), "int8_path": str(int8) if int8 else None})
    else:
        print(result.text + (f"\nWrote {int8} (int8, for --runtime onnx)." if int8 else ""))
    return 0

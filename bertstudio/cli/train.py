"""bertstudio train --model SRC --task TASK --train FILE --output DIR [...] [--json]

With --json, stdout carries one JSON object per event line ({"event": "step", "step",
"loss", "learning_rate", ...}) and ends with {"event": "result", "output_dir", "metrics"...}.
The first Ctrl+C stops after the current step and saves what was trained; a second one aborts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Any

from bertstudio.core.progress import ProgressEvent, TaskControl

CHOICES = ("text-classification", "token-classification", "pretraining")
SCHEDULER_CHOICES = ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("train", help="fine-tune or pre-train a model on a data file")
    parser.add_argument("--model", default="", metavar="SRC",
                        help="base model: Hub id or local folder (omit with --from-scratch)")
    parser.add_argument("--task", required=True, choices=CHOICES)
    parser.add_argument("--train", required=True, metavar="FILE",
                        help="CSV/TSV/JSONL (classification), CoNLL (token classification) or plain text (pretraining)")
    parser.add_argument("--eval", metavar="FILE", help="validation file (default: hold out --eval-share)")
    parser.add_argument("--eval-share", type=float, default=0.1, help="share held out when no --eval (default 0.1)")
    parser.add_argument("--output", required=True, metavar="DIR", help="model folder to write (atomically)")
    parser.add_argument("--text-column", help="classification: column with the text (default: detected)")
    parser.add_argument("--pair-column", help="classification: column with a second text")
    parser.add_argument("--label-column", help="classification: column with the label (default: detected)")
    parser.add_argument("--scheduler", default="linear", choices=SCHEDULER_CHOICES)
    parser.add_argument("--warmup-ratio", type=float, default=0.0)
    parser.add_argument("--warmup-steps", type=int, default=0, help="wins over --warmup-ratio")
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--max-steps", type=int, default=0)
    length.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--lr", type=float, default=5e-5, help="peak learning rate (default 5e-5)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--max-length", type=int, default=128, help="maximum tokens per example")
    parser.add_argument("--eval-steps", type=int, default=0, help="evaluate every N steps (default: at the end)")
    parser.add_argument("--save-steps", type=int, default=0, help="resumable checkpoint every N steps")
    parser.add_argument("--precision", default="no", choices=["no", "fp16", "bf16"], help="mixed precision (GPU)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint of --output")
    scratch = parser.add_argument_group("pre-training from scratch (with --task pretraining and no --model)")
    scratch.add_argument("--from-scratch", action="store_true", help="new BERT with a WordPiece vocab from --train")
    scratch.add_argument("--vocab-size", type=int, default=3000)
    scratch.add_argument("--layers", type=int, default=2)
    scratch.add_argument("--heads", type=int, default=2)
    scratch.add_argument("--hidden-size", type=int, default=128)
    scratch.add_argument("--ffn-size", type=int, default=512, help="feed-forward (intermediate) size")
    parser.add_argument("--json", action="store_true", help="one JSON object per event on stdout")
    parser.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> Any:
    from bertstudio.core.errors import InputError
    from bertstudio.core.training import Columns, ScratchConfig, TrainConfig

    columns = None
    if args.text_column or args.label_column or args.pair_column:
        if not (args.text_column and args.label_column):
            raise InputError("Give both --text-column and --label-column (or neither, to detect them).")
        columns = Columns(text=args.text_column, label=args.label_column, text_pair=args.pair_column)
    scratch = None
    if args.from_scratch:
        if args.task != "pretraining" or args.model:
            raise InputError("--from-scratch goes with --task pretraining and no --model.")
        scratch = ScratchConfig(vocab_size=args.vocab_size, layers=args.layers, heads=args.heads,
                                hidden_size=args.hidden_size, intermediate_size=args.ffn_size,
                                max_length=args.max_length)
    return TrainConfig(
        task=args.task, train_file=args.train, output_dir=args.output, model=args.model or "",
        eval_file=args.eval, eval_share=args.eval_share, columns=columns, scratch=scratch,
        scheduler=args.scheduler, warmup_steps=args.warmup_steps, warmup_ratio=args.warmup_ratio,
        epochs=args.epochs, max_steps=args.max_steps, batch_size=args.batch_size, grad_accum=args.grad_accum,
        learning_rate=args.lr, weight_decay=args.weight_decay, seed=args.seed, max_length=args.max_length,
        eval_steps=args.eval_steps, save_steps=args.save_steps, precision=args.precision, device=args.device,
        resume=args.resume,
    )


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.training import TrainingEvent, train

    config = config_from_args(args)
    stop = threading.Event()

    def show(event: ProgressEvent) -> None:
        payload = event.payload
        if isinstance(payload, TrainingEvent):
            if args.json:
                print(json.dumps(payload.to_json()), flush=True)
            else:
                print(_human(payload), file=sys.stderr, flush=True)

    def on_interrupt(_signum: int, _frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        print("stopping after this step and saving… (Ctrl+C again to abort)", file=sys.stderr, flush=True)
        stop.set()

    previous = signal.signal(signal.SIGINT, on_interrupt) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        result = train(config, TaskControl(on_progress=show), stop_event=stop)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if os.environ.get("RANK", "0") != "0":
        return 0  # under accelerate launch / torchrun, rank 0 alone reports
    if args.json:
        print(json.dumps(result.to_json()), flush=True)
    else:
        state = "stopped early" if result.stopped else "finished"
        print(f"{state} at step {result.step}/{result.max_steps}; saved to {result.output_dir}")
        for key, value in result.metrics.items():
            print(f"  {key}: {value:.4f}")
    return 0


def _human(event: Any) -> str:
    if event.kind == "step":
        rate = f"  {event.samples_per_second:.1f} samples/s" if event.samples_per_second else ""
        eta = f"  ETA {event.eta_seconds:.0f}s" if event.eta_seconds is not None else ""
        return f"step {event.step}/{event.max_steps}  loss {event.loss:.4f}  lr {event.learning_rate:.3g}{rate}{eta}"
    if event.kind == "eval":
        return f"eval at step {event.step}: " + ", ".join(f"{k} {v:.4f}" for k, v in event.metrics.items())
    return event.message or event.kind

"""bertstudio explain --model SRC --task TASK --method METHOD [--target T] [--steps N] [--baseline pad|zero]
[--samples N] [--seed S] [--faithfulness] INPUT... [--json]

Targets (--target): fill-mask a token (default: the top candidate); nsp is_next|not_next;
ner a token index, optionally INDEX:LABEL (default: the first entity's first token); qa start|end
of the best answer; classify a label (default: the predicted one); choice an index or the ending.
Methods: gradient, grad-x-input, integrated-gradients (--steps, --baseline), occlusion (each token
replaced by the pad token), lime and kernel-shap (captum's, over token presence: --samples, --seed).
--faithfulness adds ERASER's comprehensiveness and sufficiency at 1, 5, 10, 20 and 50% of the tokens
(deleted from the input, or all that is kept; fill-mask's mask, NER's token and QA's answer start/end stay).
fill-mask explains its first mask.
"""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli._inputs import add_input_options, checked, task_texts
from bertstudio.cli.common import stderr_control
from bertstudio.cli.task_command import clear_progress_line, head_list, print_notes, print_result
from bertstudio.core.explain.inputs import explainable
from bertstudio.core.explain.methods import (
    BASELINES,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    MAX_SEED,
    METHODS,
    check_samples,
    check_seed,
)
from bertstudio.core.limits import MAX_IG_STEPS, MAX_PERTURBATION_SAMPLES, MIN_PERTURBATION_SAMPLES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain", help="which input tokens made the model say that (token attributions)",
        description=__doc__.split("\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser, explainable(), "the task whose output is explained")
    parser.add_argument("--method", default="integrated-gradients", choices=METHODS,
                        help="gradient (L2 norm), grad-x-input, integrated-gradients (default), occlusion, lime, "
                             "kernel-shap")
    parser.add_argument("--target", metavar="T", help="the output to explain (default: see above)")
    parser.add_argument("--steps", default="50", metavar="N",
                        help=f"Integrated Gradients steps, 1-{MAX_IG_STEPS} (default 50)")
    parser.add_argument("--converge", action="store_true",
                        help=f"double the steps (at most 3 times, to {MAX_IG_STEPS} at most) until "
                             "|delta| <= 1%% of |F(input) - F(baseline)|")
    parser.add_argument("--baseline", default="pad", choices=BASELINES,
                        help="integrated-gradients: non-special tokens as the pad token (default) or as zero "
                             "word embeddings")
    parser.add_argument("--samples", default=str(DEFAULT_SAMPLES), metavar="N",
                        help=f"lime / kernel-shap: perturbed inputs, {MIN_PERTURBATION_SAMPLES}-"
                             f"{MAX_PERTURBATION_SAMPLES} (default {DEFAULT_SAMPLES})")
    parser.add_argument("--seed", default=str(DEFAULT_SEED), metavar="S",
                        help=f"lime / kernel-shap: seed of the sampling, 0-{MAX_SEED} (default {DEFAULT_SEED})")
    parser.add_argument("--faithfulness", action="store_true",
                        help="add comprehensiveness and sufficiency (ERASER) per bin and their AOPC")
    parser.add_argument("--ablate-heads", metavar="L:H[,L:H...]", type=head_list, default=(),
                        help="explain the model with these attention heads switched off (0-based layer:head)")
    parser.set_defaults(func=run)


def load(args: argparse.Namespace, spec: Any) -> Any:
    from bertstudio.core.jobs import model_notes
    from bertstudio.core.models import LoadRequest, load_model

    loaded = load_model(LoadRequest(args.model, spec.key, args.device, args.dtype), stderr_control())
    clear_progress_line()
    print_notes(model_notes(loaded))
    return loaded


def _value(value: float | None, width: int) -> str:
    """A faithfulness value, or n/a where it is undefined (null in --json)."""
    return f"{'n/a':>{width}}" if value is None else f"{value:+{width}.4f}"


def _print(result: Any) -> None:
    print(f"{result.method}: attributions to {result.target_label} = {result.score:.4f}")
    if result.delta is not None:
        print(f"F({result.baseline} baseline) = {result.baseline_score:.4f}, delta = {result.delta:+.2e} "
              f"({result.steps} steps)")
    if result.samples is not None:
        print(f"{result.samples} samples, seed {result.seed}")
    largest = max((abs(v) for v in result.attributions), default=0.0) or 1.0
    for index, (token, value) in enumerate(zip(result.tokens, result.attributions, strict=True)):
        bar = ("+" if value >= 0 else "-") * round(20 * abs(value) / largest)
        row = f"{result.rows[index]}  " if result.sequences > 1 else ""
        print(f"  {row}{index:>4}  {token:<16} {value:+.5f}  {bar}")
    faithful = result.faithfulness
    if faithful is not None:
        print(f"faithfulness over {faithful.tokens} tokens (F = {faithful.score:.4f}):")
        print("  top %          " + "".join(f"{k:>8}" for k in faithful.bins) + "      AOPC")
        for name, values, aopc in (
                ("comprehensiveness", faithful.comprehensiveness, faithful.aopc_comprehensiveness),
                ("sufficiency", faithful.sufficiency, faithful.aopc_sufficiency)):
            print(f"  {name:<17}" + "".join(_value(v, 8) for v in values) + f"  {_value(aopc, 8)}")


def run(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from bertstudio.core import engine
    from bertstudio.core.explain.ablation import heads_switched_off
    from bertstudio.core.explain.attribution import check_method, check_steps, explain
    from bertstudio.core.tasks.spec import spec_for_command

    steps = check_steps(args.steps)  # before the model is loaded
    samples, seed = check_samples(args.samples), check_seed(args.seed)
    check_method(args.method, args.baseline)
    spec = spec_for_command(args.task)
    texts = checked(spec, task_texts(args, spec))
    loaded = load(args, spec)
    with engine.holding(loaded) as model, \
            heads_switched_off(model, args.ablate_heads) if args.ablate_heads else nullcontext():
        result = explain(loaded, spec.key, texts, args.method, args.target, steps, args.converge, stderr_control(),
                         samples=samples, seed=seed, baseline=args.baseline, faithfulness=args.faithfulness)
    return print_result(result, args.json, _print)

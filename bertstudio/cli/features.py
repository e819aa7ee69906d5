"""bertstudio features train --model M --layer L --corpus FILE --output DIR [--expansion E] [--k K] [--json]
bertstudio features encode --sae DIR TEXT [--json]
bertstudio features show --sae DIR --feature N [--feature N ...] [--json]
bertstudio features lens --model M --corpus FILE --output DIR [--epochs E] [--json]

Sparse-autoencoder features of one layer (core/features): `train` fits a TopK SAE on
hidden_states[L] of every token of the corpus (one text per line) and saves sae.safetensors, sae.json
and the features' corpus contexts in DIR; `encode` gives each token of TEXT ([CLS] and [SEP]
included) its active features; `show` prints a feature's top-activating corpus contexts, how often
it fires and, for a masked LM, the tokens its decoder direction promotes through the MLM head.
`lens` trains a tuned lens for a masked LM (read it with `fill-mask --per-layer --tuned-lens DIR`).
"""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli.common import print_json, stderr_control
from bertstudio.cli.task_command import clear_progress_line, print_notes


def register(subparsers: Any) -> None:
    """`subparsers` is what ArgumentParser.add_subparsers() returned."""
    from bertstudio.core.features import sae as sae_math
    from bertstudio.core.features import tuned_lens

    parser = subparsers.add_parser(
        "features", help="sparse-autoencoder features of a layer; a tuned lens for masked LMs",
        description=__doc__.split("\n", 5)[5], formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="features_command", metavar="<train|encode|show|lens>", required=True)

    train = commands.add_parser("train", help="train a TopK SAE on one layer over a corpus file")
    train.add_argument("--model", required=True, metavar="SRC", help="Hub id or local model folder")
    train.add_argument("--layer", required=True, metavar="L", help="hidden state: 0 = embeddings, 1..layers")
    train.add_argument("--corpus", required=True, metavar="FILE", help="UTF-8 text, one text per line")
    train.add_argument("--output", required=True, metavar="DIR", help="a new folder for the SAE")
    train.add_argument("--expansion", default=str(sae_math.DEFAULT_EXPANSION), metavar="E",
                       help=f"features = E x the layer's width (default {sae_math.DEFAULT_EXPANSION})")
    train.add_argument("--k", default=str(sae_math.DEFAULT_K), metavar="K",
                       help=f"active features per token (default {sae_math.DEFAULT_K})")
    train.add_argument("--epochs", default=str(sae_math.DEFAULT_EPOCHS), metavar="N",
                       help=f"passes over the training tokens (default {sae_math.DEFAULT_EPOCHS})")
    train.add_argument("--held-out", default=str(sae_math.DEFAULT_HELD_OUT), metavar="SHARE",
                       help=f"share of the lines kept apart to measure on (default {sae_math.DEFAULT_HELD_OUT})")
    train.add_argument("--seed", default=str(sae_math.DEFAULT_SEED), metavar="S", help="initialisation and order")
    train.add_argument("--overwrite", action="store_true", help="replace an earlier SAE folder BERT Studio wrote there")
    train.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    train.add_argument("--json", action="store_true", help="print sae.json on stdout")
    train.set_defaults(func=run_train)

    encode = commands.add_parser("encode", help="each token's active features")
    encode.add_argument("--sae", required=True, metavar="DIR", help="a folder written by `features train`")
    encode.add_argument("text", metavar="TEXT")
    encode.add_argument("--model", metavar="SRC", help="the model (default: the one the SAE was trained on)")
    encode.add_argument("--layer", metavar="L", help="the layer (default: the SAE's; another is refused)")
    encode.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    encode.add_argument("--json", action="store_true",
                        help='{"tokens": [{"token", "features": [{"feature", "value"}]}]}')
    encode.set_defaults(func=run_encode)

    show = commands.add_parser("show", help="a feature's corpus contexts, histogram and promoted tokens")
    show.add_argument("--sae", required=True, metavar="DIR", help="a folder written by `features train`")
    show.add_argument("--feature", required=True, action="append", metavar="N", help="a feature (repeat for more)")
    show.add_argument("--top", default="10", metavar="N", help="contexts shown per feature (default 10)")
    show.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    show.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    show.set_defaults(func=run_show)

    lens = commands.add_parser("lens", help="train a tuned lens for a masked LM over a corpus file")
    lens.add_argument("--model", required=True, metavar="SRC", help="a masked-LM checkpoint")
    lens.add_argument("--corpus", required=True, metavar="FILE", help="UTF-8 text, one text per line")
    lens.add_argument("--output", required=True, metavar="DIR", help="a new folder for the lens")
    lens.add_argument("--epochs", default=str(tuned_lens.DEFAULT_EPOCHS), metavar="N",
                      help=f"passes over the masked positions (default {tuned_lens.DEFAULT_EPOCHS})")
    lens.add_argument("--seed", default="0", metavar="S", help="which tokens are masked, the order")
    lens.add_argument("--overwrite", action="store_true", help="replace an earlier lens folder BERT Studio wrote there")
    lens.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    lens.add_argument("--json", action="store_true", help="print lens.json on stdout")
    lens.set_defaults(func=run_lens)


def _float(value: str, what: str) -> float:
    from bertstudio.core.errors import InputError

    try:
        return float(value)
    except ValueError:
        raise InputError(f"{what} must be a number, not {value[:20]!r}.") from None


def run_train(args: argparse.Namespace) -> int:
    from bertstudio.core.corpus.query import encoder_task
    from bertstudio.core.features.sae import TrainOptions
    from bertstudio.core.features.sae_train import train_features
    from bertstudio.core.files import regular_file
    from bertstudio.core.limits import as_int
    from bertstudio.core.models import LoadRequest, load_model

    options = TrainOptions(expansion=as_int(args.expansion, "--expansion"), k=as_int(args.k, "--k"),
                           epochs=as_int(args.epochs, "--epochs"), seed=as_int(args.seed, "--seed"),
                           held_out=_float(args.held_out, "--held-out"))
    regular_file(args.corpus, "corpus file")  # before the model is loaded
    as_int(args.layer, "--layer")
    control = stderr_control()
    loaded = load_model(LoadRequest(args.model, encoder_task(), args.device), control)
    found = train_features(loaded, args.corpus, args.layer, args.output, options, control, args.overwrite)
    clear_progress_line()
    if args.json:
        print_json(found.info.record)
        return 0
    info, record = found.info, found.info.record
    print(f"SAE on layer {info.layer} of {info.model}: {info.m:,} features (d {info.d}, k {info.k}), "
          f"{record['train_tokens']:,} training and {record['held_out_tokens']:,} held-out tokens")
    print(f"  held-out: fraction of variance explained {info.fraction_of_variance_explained:.4f}, L0 {info.l0:.2f}")
    print(f"  dead features: {info.dead_features:,} of {info.m:,} ({info.dead_share:.1%})")
    print(f"  {record['steps']:,} steps in {record['seconds']:.1f} s ({record['tokens_per_second']:,.0f} tokens/s "
          f"on {record['device']})")
    print(f"  saved in {found.path}")
    return 0


def _sae_model(args: argparse.Namespace, found: Any, control: Any) -> Any:
    from bertstudio.core.corpus.query import encoder_task
    from bertstudio.core.features.sae_folder import check_model
    from bertstudio.core.models import LoadRequest, load_model

    loaded = load_model(LoadRequest(getattr(args, "model", None) or found.info.model, encoder_task(), args.device),
                        control)
    check_model(found, loaded, None if getattr(args, "layer", None) is None else _layer(args.layer))
    return loaded


def _layer(value: str) -> int:
    from bertstudio.core.limits import as_int

    return as_int(value, "--layer")


def run_encode(args: argparse.Namespace) -> int:
    from bertstudio.core.features.card import encode_text
    from bertstudio.core.features.sae_folder import load

    found = load(args.sae)
    if args.layer is not None:
        _layer(args.layer)
    control = stderr_control()
    loaded = _sae_model(args, found, control)
    encoding = encode_text(loaded, found, args.text, control)
    clear_progress_line()
    print_notes(encoding.notes)
    if args.json:
        print_json(encoding.to_json())
        return 0
    print(f"layer {encoding.layer}, {found.info.m:,} features, k {found.info.k}:")
    for number, token in enumerate(encoding.tokens):
        active = "  ".join(f"{f}:{v:.2f}" for f, v in token.features[:8])
        print(f"  {number:>3} {token.token:<14} {active}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from bertstudio.core.features.card import check_feature, feature_card, mlm_for
    from bertstudio.core.features.sae_folder import load
    from bertstudio.core.limits import check_count

    found = load(args.sae)
    features = [check_feature(found, value) for value in args.feature]
    top = check_count(args.top, "--top", 1, 20)
    control = stderr_control()
    mlm = mlm_for(found, args.device, control)
    if mlm is not None:
        from bertstudio.core.features.sae_folder import check_model

        check_model(found, mlm)
    cards = [feature_card(found, number, mlm) for number in features]
    clear_progress_line()
    if args.json:
        print_json({"features": [card.to_json() for card in cards]})
        return 0
    for card in cards:
        print(f"feature {card.feature}: fires on {card.frequency:.2%} of the corpus tokens, largest {card.largest:.3f}")
        for neighbour in card.contexts[:top]:
            print(f"  {neighbour.score:7.3f}  {neighbour.token!r:<12} line {neighbour.line}: {neighbour.context[:90]}")
        if card.promoted:
            print("  promotes: " + ", ".join(f"{t} ({v:+.2f})" for t, v in card.promoted))
        for note in card.notes:
            print(f"  ({note.text})")
    return 0


def run_lens(args: argparse.Namespace) -> int:
    from bertstudio.core.explain.inputs import explainable
    from bertstudio.core.features.tuned_lens import train_lens
    from bertstudio.core.files import regular_file
    from bertstudio.core.limits import as_int
    from bertstudio.core.models import LoadRequest, load_model

    epochs, seed = as_int(args.epochs, "--epochs"), as_int(args.seed, "--seed")
    regular_file(args.corpus, "corpus file")
    task = next(spec.key for spec in explainable() if spec.explain is not None and spec.explain.per_layer is not None)
    control = stderr_control()
    loaded = load_model(LoadRequest(args.model, task, args.device), control)
    lens = train_lens(loaded, args.corpus, args.output, control, epochs, seed, args.overwrite)
    clear_progress_line()
    if args.json:
        print_json(lens.info)
        return 0
    print(f"tuned lens for {lens.info['model']}: {lens.levels} layers, {lens.info['train_positions']:,} masked "
          f"positions, {lens.info['seconds']:.1f} s")
    print("  KL to the last layer on held-out masks (logit lens -> tuned lens):")
    for level, (logit, tuned) in enumerate(zip(lens.info["kl_logit_lens"], lens.info["kl_tuned_lens"], strict=True)):
        print(f"  {level:>3}  {logit:8.4f} -> {tuned:8.4f}")
    print(f"  saved in {lens.path}")
    return 0

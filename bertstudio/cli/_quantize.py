"""--quantize and --compare-quantize, the same on every task command and on `evaluate`.

`--quantize int8` loads model A and quantizes it dynamically (CPU); `--compare-quantize int8`
makes the --compare model the quantized variant ("SRC [int8]", core/quantize.py), so
`--model M --compare M --compare-quantize int8` puts a model beside its own int8 variant.
"""

from __future__ import annotations

import argparse

from bertstudio.core.quantize import QUANTIZE_CHOICES


def add_quantize_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quantize", choices=QUANTIZE_CHOICES, default=None,
                        help="dynamically quantize the model's linear layers after loading (CPU only)")
    parser.add_argument("--compare-quantize", choices=QUANTIZE_CHOICES, default=None,
                        help="quantize the --compare model (which may name the same model as --model)")


def compare_source(args: argparse.Namespace) -> str | None:
    """The --compare source with its variant; --compare-quantize without --compare is refused."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.quantize import variant_source

    if args.compare_quantize and not args.compare:
        raise InputError("--compare-quantize quantizes the --compare model; give --compare too.",
                         hint="To compare a model with its own int8 variant, name it in both --model and --compare.")
    return variant_source(args.compare, args.compare_quantize) if args.compare else None

"""The settings of a distillation run (teacher, student size, temperature, mix), apart from the
trainable itself so that config.py can hold them without an import circle.

Like every training setting, each field's Option generates the `train` CLI flag and the Train
form row (group "Distillation", shown for that task only) and bounds the value.
"""

from __future__ import annotations

from dataclasses import dataclass

from bertstudio.core.errors import InputError
from bertstudio.core.limits import MAX_LAYERS
from bertstudio.core.training.options import opt, options


@dataclass(frozen=True)
class DistillConfig:
    """Teacher, student size, temperature and the soft/hard mix of `train --task distill`."""

    teacher: str = opt("", flag="--teacher", label="Teacher", widget="model", group="Distillation", metavar="SRC",
                       help="distillation: the fine-tuned classifier to distil (Hub id or folder)")
    student_layers: int = opt(0, flag="--student-layers", label="Student layers", widget="int", low=0,
                              high=MAX_LAYERS, group="Distillation",
                              help="distillation: the student is the teacher (or --model) cut to N layers, "
                                   "initialised from its layers as DistilBERT is (0: --model as it is)")
    temperature: float = opt(2.0, flag="--temperature", label="Temperature", widget="float", low=0.0,
                             low_open=True, high=100.0, decimals=2, step=0.5, group="Distillation",
                             help="distillation: softmax temperature of the soft targets (default 2)")
    alpha: float = opt(0.5, flag="--alpha", label="Soft-target weight", widget="float", low=0.0, high=1.0,
                       decimals=2, step=0.1, group="Distillation",
                       help="distillation: weight of the soft-target loss; 1 - alpha goes to the hard labels "
                            "(default 0.5)")

    def validate(self) -> None:
        for name, option, _default in options(DistillConfig):
            option.check(name, getattr(self, name))
        if not self.teacher.strip():
            raise InputError("No teacher chosen.", hint="Name the fine-tuned classifier to distil (--teacher).")

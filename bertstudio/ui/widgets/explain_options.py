"""The Explain tab's method picker and each method's settings, shown only where they apply.

Integrated Gradients takes steps, Converge and its baseline; LIME and Kernel SHAP take samples and
a seed; "All methods" takes the steps and the samples and seed (it runs IG with both baselines).
The fields sit on a row of their own, so a method change never moves Explain or Cancel. The
bounds are the core's (core/limits, core/explain/methods): the spin boxes cannot pass them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QSpinBox, QWidget

from bertstudio.core.explain.methods import (
    BASELINE_TITLES,
    BASELINES,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    GRAD_X_INPUT,
    GRADIENT,
    INTEGRATED_GRADIENTS,
    KERNEL_SHAP,
    LIME,
    MAX_SEED,
    OCCLUSION,
    SAMPLED,
    TITLES,
)
from bertstudio.core.limits import MAX_IG_STEPS, MAX_PERTURBATION_SAMPLES, MIN_PERTURBATION_SAMPLES
from bertstudio.ui.widgets.explain_origin import MethodSettings

ALL_METHODS = "all"
ORDER = (INTEGRATED_GRADIENTS, GRAD_X_INPUT, GRADIENT, OCCLUSION, LIME, KERNEL_SHAP)


class MethodOptions(QWidget):
    """`method` is the picker (placed by the tab); this widget is the row of settings."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.method = QComboBox()
        for key in ORDER:
            self.method.addItem(TITLES[key], key)
        self.method.addItem("All methods, side by side", ALL_METHODS)
        self.method.setToolTip("All methods: each method (IG with both baselines) on the same input, their rank "
                               "agreement and faithfulness")
        self.steps = QSpinBox()
        self.steps.setRange(1, MAX_IG_STEPS)  # the core's bound (explain refuses more)
        self.steps.setValue(50)
        self.steps.setPrefix("steps ")
        self.steps.setToolTip(f"Integrated Gradients steps, 1-{MAX_IG_STEPS}")
        self.converge = QCheckBox("Converge")
        self.converge.setToolTip("Double the steps (at most 3 times) until |delta| <= 1% of |F(input) - F(baseline)|")
        self.baseline = QComboBox()
        for key in BASELINES:
            self.baseline.addItem(BASELINE_TITLES[key], key)
        self.baseline.setToolTip("Integrated Gradients starts from the input with every non-special token replaced "
                                 "by [PAD], or with its word embedding set to zero")
        self.samples = QSpinBox()
        self.samples.setRange(MIN_PERTURBATION_SAMPLES, MAX_PERTURBATION_SAMPLES)
        self.samples.setValue(DEFAULT_SAMPLES)
        self.samples.setPrefix("samples ")
        self.samples.setToolTip(f"LIME / Kernel SHAP: perturbed inputs, {MIN_PERTURBATION_SAMPLES}-"
                                f"{MAX_PERTURBATION_SAMPLES:,} (one forward row each)")
        self.seed = QSpinBox()
        self.seed.setRange(0, MAX_SEED)
        self.seed.setValue(DEFAULT_SEED)
        self.seed.setPrefix("seed ")
        self.seed.setToolTip("LIME / Kernel SHAP: the same seed and samples give the same attributions")
        self.faithfulness = QCheckBox("Faithfulness")
        self.faithfulness.setChecked(True)
        self.faithfulness.setToolTip("Comprehensiveness and sufficiency (ERASER): delete the top 1-50% of the tokens, "
                                     "or keep only them, and run again")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Settings:"))
        for widget in (self.steps, self.converge, self.baseline, self.samples, self.seed, self.faithfulness):
            layout.addWidget(widget)
        layout.addStretch(1)
        self.method.currentIndexChanged.connect(self._update)
        self._update()

    def chosen(self) -> str:
        return str(self.method.currentData())

    def _update(self, *_args: Any) -> None:
        method = self.chosen()
        every = method == ALL_METHODS
        self.steps.setVisible(method == INTEGRATED_GRADIENTS or every)
        self.converge.setVisible(method == INTEGRATED_GRADIENTS)
        self.baseline.setVisible(method == INTEGRATED_GRADIENTS)
        for widget in (self.samples, self.seed):
            widget.setVisible(method in SAMPLED or every)

    def settings(self) -> MethodSettings:
        """What Explain would run with now: the chosen method and only the settings it reads."""
        method = self.chosen()
        every, ig, sampled = method == ALL_METHODS, method == INTEGRATED_GRADIENTS, method in SAMPLED
        return MethodSettings(method, steps=self.steps.value() if ig or every else None,
                              converge=self.converge.isChecked() if ig else None,
                              baseline=str(self.baseline.currentData()) if ig else None,
                              samples=self.samples.value() if sampled or every else None,
                              seed=self.seed.value() if sampled or every else None,
                              faithfulness=self.faithfulness.isChecked())

    def state(self) -> dict[str, Any]:
        return {"method": self.chosen(), "steps": self.steps.value(), "converge": self.converge.isChecked(),
                "baseline": str(self.baseline.currentData()), "samples": self.samples.value(),
                "seed": self.seed.value(), "faithfulness": self.faithfulness.isChecked()}

    def restore(self, state: dict[str, Any]) -> None:
        """A workspace's settings; a wrong value leaves the field as it is (the spin boxes clamp)."""
        for combo, key in ((self.method, "method"), (self.baseline, "baseline")):
            index = combo.findData(state.get(key))
            if index >= 0:
                combo.setCurrentIndex(index)
        for box, key, default in ((self.steps, "steps", 50), (self.samples, "samples", DEFAULT_SAMPLES),
                                  (self.seed, "seed", DEFAULT_SEED)):
            value = state.get(key, default)
            box.setValue(value if isinstance(value, int) and not isinstance(value, bool) else default)
        self.converge.setChecked(bool(state.get("converge", False)))
        self.faithfulness.setChecked(bool(state.get("faithfulness", True)))

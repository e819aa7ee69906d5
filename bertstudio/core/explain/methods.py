"""The attribution methods by name, and their bounds: one list for the core, the CLI and the tab.

Kept free of torch (and of every heavy import) so the CLI's --help and the Explain tab read it
before torch is loaded.
"""

from __future__ import annotations

from bertstudio.core.limits import MAX_PERTURBATION_SAMPLES, MIN_PERTURBATION_SAMPLES, check_count

GRADIENT = "gradient"
GRAD_X_INPUT = "grad-x-input"
INTEGRATED_GRADIENTS = "integrated-gradients"
OCCLUSION = "occlusion"
LIME = "lime"
KERNEL_SHAP = "kernel-shap"

METHODS = (GRADIENT, GRAD_X_INPUT, INTEGRATED_GRADIENTS, OCCLUSION, LIME, KERNEL_SHAP)
TITLES = {
    INTEGRATED_GRADIENTS: "Integrated Gradients", GRAD_X_INPUT: "Gradient × input", GRADIENT: "Gradient (L2 norm)",
    OCCLUSION: "Occlusion", LIME: "LIME", KERNEL_SHAP: "Kernel SHAP",
}
SHORT = {GRADIENT: "grad", GRAD_X_INPUT: "grad×in", INTEGRATED_GRADIENTS: "IG", OCCLUSION: "occl.", LIME: "LIME",
         KERNEL_SHAP: "SHAP"}
SAMPLED = (LIME, KERNEL_SHAP)  # take --samples and --seed
PERTURBATION = (OCCLUSION, LIME, KERNEL_SHAP)  # forward passes only, no gradient

# Integrated Gradients' baseline: every non-special token replaced by the pad token, or its word
# embedding set to zero (special tokens kept in both).
BASELINES = ("pad", "zero")
BASELINE_TITLES = {"pad": "[PAD] baseline", "zero": "zero baseline"}

DEFAULT_SAMPLES = 256
DEFAULT_SEED = 0
MAX_SEED = 2**31 - 1

FAITHFULNESS_BINS = (1, 5, 10, 20, 50)  # % of the non-special tokens (ERASER, DeYoung et al. 2020)


def label(method: str, baseline: str = "pad") -> str:
    """A method as a person reads it; Integrated Gradients names its baseline when it is not [PAD]."""
    title = TITLES.get(method, method)
    return f"{title} (zero baseline)" if method == INTEGRATED_GRADIENTS and baseline == "zero" else title


def check_samples(samples: object) -> int:
    """LIME / Kernel SHAP samples: one forward row each, so the bound keeps a run to minutes on a
    large model; below the lower bound the regression has fewer rows than a sentence has tokens."""
    return check_count(samples, "Samples (--samples)", MIN_PERTURBATION_SAMPLES, MAX_PERTURBATION_SAMPLES)


def check_seed(seed: object) -> int:
    return check_count(seed, "The seed (--seed)", 0, MAX_SEED)

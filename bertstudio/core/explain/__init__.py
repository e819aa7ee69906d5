"""Why the model said that: token attributions, head ablation and importance, per-layer predictions."""

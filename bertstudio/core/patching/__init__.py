"""Activation patching ("Trace why"): which layer, position and head carry the clean answer.

The model runs on a corrupted input while one internal activation is copied from the clean run
(Meng et al. 2022's causal tracing; TransformerLens' `generic_activation_patch`); how much of the
clean target probability comes back says where the information lives. `hooks` finds the sites
per architecture, `trace` runs the batched patched runs, `attribution` is the gradient-based
linear approximation (attribution patching) for long inputs, `result` holds the heatmaps.
"""

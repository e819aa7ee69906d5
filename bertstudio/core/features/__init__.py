"""Inside the encoder: sparse-autoencoder features (sae.py, contexts.py), linear concept erasure
(erase.py, LEACE from EleutherAI's concept-erasure) and a tuned lens for masked LMs (tuned_lens.py).

Every state is read as `hidden_states[L]` (output_hidden_states=True: any architecture), every
batch runs through core/engine.py, and every edit of a state in the forward goes through
edit.py (the patching sites of core/patching/hooks.py, found through the model's anatomy).
No Qt here; the window's jobs are in jobs.py.
"""

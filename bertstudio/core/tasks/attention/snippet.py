"""Attention's Copy as Python: every head's strongest weight (and, with norms, its largest
value-weighted norm) from one eager forward pass."""

from __future__ import annotations

from typing import Any

from bertstudio.core.anatomy.families import SCRIPT_WALK, script_sites
from bertstudio.core.snippets import field, literal, load, script, text_field

_ATTENTION = '''with torch.inference_mode():
    attentions = model(**encoding, output_attentions=True).attentions  # per layer: (1, heads, q, k)
tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0])
for layer, a in enumerate(attentions):
    for head in range(a.shape[1]):
        row = a[0, head]
        q = int(row.max(dim=-1).values.argmax())
        k = int(row[q].argmax())
        print(f"layer {layer} head {head}: strongest {tokens[q]} -> {tokens[k]} {float(row[q, k]):.4f}")
'''
# Value-weighted norms (Kobayashi et al. 2020): ||alpha_ij f_h(x_j)||, f_h(x_j) = v_j^h W_O^h, from the
# value projection's outputs and the attention output projection's weight, captured by hooks in
# call order (ALBERT calls its one shared layer once per layer).
_NORM_HOOKS = '''# each architecture's layers, value projection (or fused qkv) and attention output projection (W_O)
layers_path, value_path, output_path, fused = SITES[model.config.model_type]
values, weights = [], []
for block in walk(getattr(model, model.base_model_prefix, model), layers_path):
    walk(block, value_path)[0].register_forward_hook(
        lambda module, args, out: values.append(out[0].chunk(3, dim=-1)[2] if fused else out[0]))
    walk(block, output_path)[0].register_forward_hook(
        lambda module, args, out: weights.append(module.weight.detach()))
'''
_NORMS = '''if len(values) != len(attentions) or len(weights) != len(attentions):
    raise SystemExit("The value projections did not run once per layer: this model's attention is built "
                     "differently, and its value-weighted norms cannot be read this way.")
heads = model.config.num_attention_heads
for layer, (a, v, w) in enumerate(zip(attentions, values, weights)):
    d = w.shape[1] // heads
    v = v.view(-1, v.shape[-1] // d, d).repeat_interleave(heads * d // v.shape[-1], dim=1)  # shared key/value heads
    f = torch.einsum("thd,ohd->hto", v, w.view(w.shape[0], heads, d))  # f_h(x_j)
    norms = a[0] * f.norm(dim=-1)[:, None, :]  # heads x q x k: ||alpha_ij f_h(x_j)||
    for head in range(heads):
        row = norms[head]
        q = int(row.max(dim=-1).values.argmax())
        k = int(row[q].argmax())
        print(f"norms layer {layer} head {head}: largest {tokens[q]} -> {tokens[k]} {float(row[q, k]):.4f}")
'''


def build(source: str, inputs: Any) -> str:
    """Every head's strongest weight; with `norms` (the CLI's --norms, the tab's weighting toggle)
    also every head's largest value-weighted norm, from the same forward pass."""
    text, pair = text_field(inputs, "text"), field(inputs, "pair")
    if pair:
        given = script("TEXT = {text}\nPAIR = {pair}\nencoding = tokenizer(TEXT, PAIR, return_tensors=\"pt\")\n",
                        text=text, pair=str(pair))
    else:
        given = script("TEXT = {text}\nencoding = tokenizer(TEXT, return_tensors=\"pt\")\n", text=text)
    norms = bool(field(inputs, "norms", False))
    sites = ("\n# where each architecture keeps its parts (BERT Studio's anatomy table)\n"
             f"SITES = {literal(script_sites())}\n\n\n{SCRIPT_WALK}\n\n")
    return (load("AutoModel", source, ', attn_implementation="eager"') + "\n" + given
            + (sites + _NORM_HOOKS if norms else "") + _ATTENTION + (_NORMS if norms else ""))

"""Copy as Python for one cell of a trace: a hooks-only transformers script that prints the clean,
corrupted and patched target probabilities. Every value we did not write enters through
`snippets.literal` as its own statement (see core/snippets.py)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.anatomy.families import SCRIPT_WALK, script_sites
from bertstudio.core.errors import InputError
from bertstudio.core.snippets import literal

_BODY = '''
def sites(model):
    """The layer modules (ALBERT: its one shared layer, called once per layer) and the attention output projections."""
    layers, _value, output, _fused = SITES[model.config.model_type]
    blocks = walk(getattr(model, model.base_model_prefix, model), layers)
    return blocks, [walk(block, output)[0] for block in blocks]


def counted(modules, wanted, change):
    """Pre-hooks on `modules` calling `change(tensor)` on the call number `wanted` (counted over all)."""
    calls = [0]

    def hook(module, args):
        index = calls[0]
        calls[0] += 1
        return (change(args[0]), *args[1:]) if index == wanted else None

    return [module.register_forward_pre_hook(hook) for module in modules]


blocks, projections = sites(model)
layers = model.config.num_hidden_layers if hasattr(model.config, "num_hidden_layers") else model.config.n_layers
with torch.no_grad():
    kept = {}
    handles = counted(projections, LAYER, lambda x: kept.setdefault("context", x.clone()))
    outputs = model(**clean, output_hidden_states=True)
    for handle in handles:
        handle.remove()
    clean_score = float(probability(outputs))
    states = outputs.hidden_states
    corrupted_score = float(probability(model(**corrupted)))

    def state(x):
        x = x.clone()
        x[:, POSITION] = states[LAYER][:, POSITION]
        return x

    def head(x):
        x = x.clone()
        width = x.shape[-1] // model.config.num_attention_heads if hasattr(model.config, "num_attention_heads") \\
            else x.shape[-1] // model.config.n_heads
        x[..., HEAD * width:(HEAD + 1) * width] = kept["context"][..., HEAD * width:(HEAD + 1) * width]
        return x

    if KIND == "head":
        handles = counted(projections, LAYER, head)
    elif LAYER < layers:
        handles = counted(blocks, LAYER, state)
    else:  # the last layer's output
        seen = [0]

        def last(module, args, output):
            seen[0] += 1
            if seen[0] != layers:
                return None
            return (state(output[0]), *output[1:]) if isinstance(output, tuple) else state(output)

        handles = [block.register_forward_hook(last) for block in blocks]
    patched_score = float(probability(model(**corrupted)))
    for handle in handles:
        handle.remove()

print(f"clean {clean_score:.6f}  corrupted {corrupted_score:.6f}  patched {patched_score:.6f}")
'''


def patch_script(source: str, result: Any, clean: tuple[str, ...], corrupted: tuple[str, ...], kind: str,
                 row: int, column: int) -> str:
    """The script reproducing `result`'s cell: kind "state" (row = hidden state, column = position)
    or "head" (row = layer, column = head)."""
    from bertstudio.core.tasks.spec import all_specs, spec_for

    spec = spec_for(result.task)
    reader = spec.patch_reader  # how the script reads P(target): the task's own (core/tasks)
    if not reader:
        names = ", ".join(s.title for s in all_specs().values() if s.patch_reader)
        raise InputError(f"Copy as Python writes trace scripts for {names}.",
                         hint="Use `bertstudio patch --json` for this task's numbers.")
    if kind not in ("state", "head"):
        raise ValueError(kind)
    if kind == "state" and not result.same_length:
        raise InputError("The inputs differ in length: no state is patched position by position.")
    model_class = spec.model_class
    lines = [
        f"# BERT Studio: Trace why, one {kind} cell of activation patching",
        "# pip install torch transformers",
        "import torch",
        f"from transformers import AutoTokenizer, {model_class}",
        "",
        f"SOURCE = {literal(source)}",
        f"CLEAN = {literal(list(clean))}",
        f"CORRUPTED = {literal(list(corrupted))}",
        f"TARGET = {literal(str(result.target))}",
        f"KIND = {literal(kind)}",
        f"LAYER = {literal(int(row))}",
        f"POSITION = {literal(int(column) if kind == 'state' else 0)}",
        f"HEAD = {literal(int(column) if kind == 'head' else 0)}",
        "",
        "tokenizer = AutoTokenizer.from_pretrained(SOURCE)",
        f"model = {model_class}.from_pretrained(SOURCE).eval()",
        "clean = tokenizer(*[t.replace('[MASK]', tokenizer.mask_token or '[MASK]') for t in CLEAN], "
        "return_tensors='pt')",
        "corrupted = tokenizer(*[t.replace('[MASK]', tokenizer.mask_token or '[MASK]') for t in CORRUPTED], "
        "return_tensors='pt')",
        "",
        "",
        reader,
        "",
        "# where each architecture keeps its layers and attention output projection (BERT Studio's anatomy table)",
        f"SITES = {literal(script_sites())}",
        "",
        "",
        SCRIPT_WALK,
    ]
    return "\n".join(lines) + _BODY

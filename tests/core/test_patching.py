"""Activation patching equals hand-written forward hooks, on every architecture and a real ALBERT."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.models import LoadRequest, load_uncached
from bertstudio.core.progress import TaskControl
from tests.fixtures.checkpoints import ALL_ARCHITECTURES

ARCHS = ALL_ARCHITECTURES
SWAPS = ("dog", "mary", "berlin", "house", "tree", "film", "book", "river", "game", "man", "car", "big", "old")
TOLERANCE = 1e-4


def _loaded(checkpoint_factory, arch: str, head: str = "MaskedLM", task: str = "fill-mask"):  # noqa: ANN001, ANN202
    return load_uncached(LoadRequest(str(checkpoint_factory(arch, head)), task))


def _swapped(tokenizer, template: str, word: str) -> str:  # noqa: ANN001
    """`template` with another word in place of `word` that keeps the number of tokens."""
    length = len(tokenizer(template.format(word))["input_ids"])
    for other in SWAPS:
        if other != word and len(tokenizer(template.format(other))["input_ids"]) == length:
            return template.format(other)
    raise AssertionError("no same-length swap")


# -- the reference: hooks written by hand per architecture, transformers' own hidden states -----
def _blocks(model):  # noqa: ANN001, ANN202
    """(layer modules called in order, attention output projections, shared?) written out per model."""
    kind = model.config.model_type
    base = getattr(model, model.base_model_prefix)
    if kind == "albert":
        layer = base.encoder.albert_layer_groups[0].albert_layers[0]
        return [layer], [layer.attention.dense], True
    if kind == "distilbert":
        blocks = list(base.transformer.layer)
        return blocks, [b.attention.out_lin for b in blocks], False
    if kind == "modernbert":
        return list(base.layers), [b.attn.Wo for b in base.layers], False
    if kind == "eurobert":
        return list(base.layers), [b.self_attn.o_proj for b in base.layers], False
    blocks = list(base.encoder.layer)
    if kind == "mpnet":
        return blocks, [b.attention.attn.o for b in blocks], False
    return blocks, [b.attention.output.dense for b in blocks], False


def _hooked(model, modules, shared: bool, layers: int, call):  # noqa: ANN001, ANN202
    """Register `call(index, module, args)` as a pre-hook; ALBERT's one module counts its calls."""
    handles, count = [], [0]

    def make(index: int):  # noqa: ANN202
        def hook(module, args):  # noqa: ANN001, ANN202
            if shared:
                own = count[0]
                count[0] = (count[0] + 1) % layers
            else:
                own = index
            return call(own, args)
        return hook

    for index, module in enumerate(modules):
        handles.append(module.register_forward_pre_hook(make(index)))
    return handles


def _reference_state(loaded, clean_enc, corrupted_enc, probability, level: int, position: int) -> float:  # noqa: ANN001
    import torch

    model = loaded.model
    blocks, _, shared = _blocks(model)
    layers = model.config.num_hidden_layers if hasattr(model.config, "num_hidden_layers") else model.config.n_layers
    with torch.no_grad():
        hidden = list(model(**clean_enc, output_hidden_states=True).hidden_states)
        last: list = []  # the last layer call's own output (pre-LN models normalise it after: hidden[-1] is not it)
        handle = blocks[-1].register_forward_hook(
            lambda module, args, output: last.append((output[0] if isinstance(output, tuple) else output).clone()))
        model(**clean_enc)
        handle.remove()
        hidden[layers] = last[-1]
        if level < layers:
            def call(index, args):  # noqa: ANN001, ANN202
                if index != level:
                    return None
                x = args[0].clone()
                x[:, position] = hidden[level][:, position]
                return (x, *args[1:])
            handles = _hooked(model, blocks, shared, layers, call)
        else:
            def after(module, args, output):  # noqa: ANN001, ANN202
                x = (output[0] if isinstance(output, tuple) else output).clone()
                x[:, position] = hidden[level][:, position]
                return (x, *output[1:]) if isinstance(output, tuple) else x
            handles = [blocks[-1].register_forward_hook(after)] if not shared else []
            if shared:
                seen = [0]

                def after_shared(module, args, output):  # noqa: ANN001, ANN202
                    seen[0] += 1
                    return after(module, args, output) if seen[0] == layers else None
                handles = [blocks[0].register_forward_hook(after_shared)]
        try:
            return float(probability(model(**corrupted_enc))[0])
        finally:
            for handle in handles:
                handle.remove()


def _reference_head(loaded, clean_enc, corrupted_enc, probability, layer: int, head: int) -> float:  # noqa: ANN001
    import torch

    model = loaded.model
    _, projections, shared = _blocks(model)
    config = model.config
    layers = getattr(config, "num_hidden_layers", None) or config.n_layers
    heads = getattr(config, "num_attention_heads", None) or config.n_heads
    kept = {}

    def keep(index, args):  # noqa: ANN001, ANN202
        kept[index] = args[0].clone()

    with torch.no_grad():
        handles = _hooked(model, projections, shared, layers, keep)
        model(**clean_enc)
        for handle in handles:
            handle.remove()

        def swap(index, args):  # noqa: ANN001, ANN202
            if index != layer:
                return None
            x = args[0].clone()
            width = x.shape[-1] // heads
            x[..., head * width:(head + 1) * width] = kept[layer][..., head * width:(head + 1) * width]
            return (x, *args[1:])

        handles = _hooked(model, projections, shared, layers, swap)
        try:
            return float(probability(model(**corrupted_enc))[0])
        finally:
            for handle in handles:
                handle.remove()


def _check_against_reference(loaded, clean: str, corrupted: str, positions=None, layers=None) -> None:  # noqa: ANN001
    import torch

    from bertstudio.core.patching.trace import trace

    tokenizer = loaded.tokenizer
    result = trace(loaded, "fill-mask", (clean,), (corrupted,))
    clean_enc = tokenizer(clean, return_tensors="pt")
    corrupted_enc = tokenizer(corrupted, return_tensors="pt")
    mask = int((clean_enc["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0])
    with torch.no_grad():
        token = int(loaded.model(**clean_enc).logits[0, mask].argmax())

    def probability(outputs):  # noqa: ANN001, ANN202
        return outputs.logits[:, mask].softmax(-1)[:, token]

    with torch.no_grad():
        assert result.clean_score == pytest.approx(float(probability(loaded.model(**clean_enc))[0]), abs=TOLERANCE)
        assert result.corrupted_score == pytest.approx(float(probability(loaded.model(**corrupted_enc))[0]),
                                                       abs=TOLERANCE)
    assert result.states is not None and result.same_length
    columns = positions if positions is not None else range(len(result.clean_tokens))
    for level, row in enumerate(result.states):
        for position in columns:
            expected = _reference_state(loaded, clean_enc, corrupted_enc, probability, level, position)
            assert row[position] == pytest.approx(expected, abs=TOLERANCE), (level, position)
    for layer, row in enumerate(result.heads):
        if layers is not None and layer not in layers:
            continue
        for head, value in enumerate(row):
            assert value == pytest.approx(_reference_head(loaded, clean_enc, corrupted_enc, probability, layer, head),
                                          abs=TOLERANCE), (layer, head)


@pytest.mark.parametrize("arch", ARCHS)
def test_patching_equals_hand_written_hooks(checkpoint_factory, arch: str) -> None:  # noqa: ANN001
    loaded = _loaded(checkpoint_factory, arch)
    template = "the {} sat on the " + loaded.tokenizer.mask_token + " ."
    _check_against_reference(loaded, template.format("cat"), _swapped(loaded.tokenizer, template, "cat"))


def test_patching_the_real_chemistry_albert(real_models) -> None:  # noqa: ANN001
    loaded = load_uncached(LoadRequest(str(real_models["rxnmapper-albert-smiles-mlm"]), "fill-mask"))
    _check_against_reference(loaded, "C C ( = [MASK] ) O", "N C ( = [MASK] ) O", positions=(0, 1, 5),
                             layers=(0, 6, 11))


@pytest.mark.parametrize("arch", ("bert", "albert"))
def test_every_position_restores_the_clean_score_and_none_the_corrupted(checkpoint_factory, arch: str) -> None:  # noqa: ANN001
    import torch

    from bertstudio.core.patching.hooks import STATE, Copy, sites
    from bertstudio.core.patching.trace import _run, set_up

    loaded = _loaded(checkpoint_factory, arch)
    template = "the {} sat on the " + loaded.tokenizer.mask_token + " ."
    setup = set_up(loaded, "fill-mask", (template.format("cat"),), (_swapped(loaded.tokenizer, template, "cat"),),
                   None, None)
    assert abs(setup.clean_score - setup.corrupted_score) > 1e-7  # there is something to restore
    found = sites(loaded.model)
    every = torch.tensor(setup.columns)
    zeros = torch.zeros_like(every)
    for level in range(found.levels):
        whole = Copy(STATE, level, zeros, every, zeros, every)
        assert _run(loaded, setup, [[whole]], found.heads)[0] == pytest.approx(setup.clean_score, abs=1e-6)
    assert _run(loaded, setup, [[], []], found.heads) == pytest.approx([setup.corrupted_score] * 2, abs=1e-6)


TASKS = {
    "classification": ("SequenceClassification", ("a good film about a big dog .",), ("a bad film about a big dog .",)),
    "nsp": ("NextSentencePrediction", ("the cat sat .", "the dog ran ."), ("the cat sat .", "the man ran .")),
    "ner": ("TokenClassification", ("john lives in paris .",), ("mary lives in paris .",)),
    "qa": ("QuestionAnswering", ("where does john live ?", "john lives in paris ."),
           ("where does john live ?", "john lives in berlin .")),
    "multiple-choice": ("MultipleChoice", ("the cat", "sat on the mat .", "ran fast ."),
                        ("the dog", "sat on the mat .", "ran fast .")),
}


@pytest.mark.parametrize("task", TASKS)
def test_every_task_traces_its_explain_target(checkpoint_factory, task: str) -> None:  # noqa: ANN001
    from bertstudio.core.explain.targets import prepare
    from bertstudio.core.patching.trace import trace

    head, clean, corrupted = TASKS[task]
    loaded = _loaded(checkpoint_factory, "bert", head, task)
    result = trace(loaded, task, clean, corrupted)
    prepared = prepare(loaded, task, clean)
    assert result.target == prepared.target and result.target_label == prepared.target_label
    import torch

    with torch.no_grad():
        assert result.clean_score == pytest.approx(float(prepared.probability(loaded.model(**prepared.inputs))[0]),
                                                   abs=1e-6)
    assert result.states is not None and len(result.states) == 3  # embeddings + 2 layers
    assert all(len(row) == len(result.clean_tokens) for row in result.states)
    assert len(result.heads) == 2 and all(len(row) == 2 for row in result.heads) and len(result.layers) == 2
    assert result.differing  # the edit is marked
    last = result.states[-1]  # the last layer's state at the position(s) read restores most of the answer
    assert any(v is not None and abs(v - result.clean_score) < abs(result.corrupted_score - result.clean_score) + 1e-6
               for v in last)


def test_different_lengths_leave_the_states_out_and_say_so(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.patching.trace import trace

    loaded = _loaded(checkpoint_factory, "bert", "SequenceClassification", "classification")
    result = trace(loaded, "classification", ("a good film .",), ("a very bad old film .",))
    assert result.states is None and not result.same_length
    assert any("different token lengths" in note.text and "position by position is undefined" in note.text
               for note in result.notes)
    assert len(result.heads) == 2 and len(result.layers) == 2
    assert result.counterpart[0] == 0 and result.counterpart[-1] == len(result.corrupted_tokens) - 1  # [CLS], [SEP]
    assert None in result.counterpart  # 'good' has none
    mask = _loaded(checkpoint_factory, "bert")
    with pytest.raises(InputError, match="different token lengths"):
        trace(mask, "fill-mask", ("the cat sat on the [MASK] .",), ("the big cat sat on the [MASK] .",))


def test_noise_is_seeded_and_corrupts_only_the_chosen_tokens(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.patching.trace import Noise, trace

    loaded = _loaded(checkpoint_factory, "bert", "SequenceClassification", "classification")
    text = ("a good film about a big dog .",)
    first = trace(loaded, "classification", text, noise=Noise((2,), seed=3))
    again = trace(loaded, "classification", text, noise=Noise((2,), seed=3))
    other = trace(loaded, "classification", text, noise=Noise((2,), seed=4))
    assert first.to_json() == again.to_json() and first.corrupted_score != other.corrupted_score
    assert first.corrupted_score != first.clean_score and first.differing == (2,) and first.corruption == "noise"
    assert first.states is not None  # positions before the noised one are not touched by the noise:
    assert first.states[0][0] == pytest.approx(first.corrupted_score, abs=1e-6)
    assert first.states[0][2] == pytest.approx(first.clean_score, abs=1e-6)  # removing the noise undoes it
    with pytest.raises(InputError, match="Token 99 does not exist"):
        trace(loaded, "classification", text, noise=Noise((99,)))


def test_attribution_patching_estimates_and_reports_its_agreement(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.patching.trace import trace

    loaded = _loaded(checkpoint_factory, "bert", "SequenceClassification", "classification")
    clean, corrupted = ("a good film about a big dog .",), ("a bad film about a big dog .",)
    exact = trace(loaded, "classification", clean, corrupted)
    estimate = trace(loaded, "classification", clean, corrupted, method="attribution", sample=12)
    assert estimate.method == "attribution" and estimate.agreement_cells == 12
    assert estimate.agreement is not None and -1.0 <= estimate.agreement <= 1.0
    assert exact.states is not None and estimate.states is not None
    # the last state: the head is one layer from it, so the linear estimate is near the exact value
    for got, want in zip(estimate.states[0], exact.states[0], strict=True):
        assert got is not None and want is not None
    assert estimate.clean_score == exact.clean_score and estimate.corrupted_score == exact.corrupted_score
    unchanged = [p for p in range(len(exact.clean_tokens)) if p not in exact.differing]
    for position in unchanged[:3]:  # copying an identical embedding changes nothing, exactly and estimated
        assert estimate.states[0][position] == pytest.approx(exact.corrupted_score, abs=1e-6)
        assert exact.states[0][position] == pytest.approx(exact.corrupted_score, abs=1e-6)


def test_progress_per_row_and_cancel(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.patching.trace import trace

    loaded = _loaded(checkpoint_factory, "bert", "SequenceClassification", "classification")
    events = []
    trace(loaded, "classification", ("a good film .",), ("a bad film .",), control=TaskControl(events.append))
    assert [e.message for e in events if e.message.startswith("Patching hidden state")] == [
        f"Patching hidden state {level} of 2" for level in range(3)]
    stopper = TaskControl()

    def stop_at_the_second_row(event) -> None:  # noqa: ANN001
        if event.message.startswith("Patching hidden state 1"):
            stopper.request_stop()

    stopper._on_progress = stop_at_the_second_row  # noqa: SLF001 - a control that stops itself
    with pytest.raises(TaskCancelled):
        trace(loaded, "classification", ("a good film .",), ("a bad film .",), control=stopper)
    with pytest.raises(InputError, match="corrupted input"):
        trace(loaded, "classification", ("a good film .",))


@pytest.mark.parametrize("task", TASKS)
def test_batched_rows_equal_one_forward_per_copy(checkpoint_factory, task: str) -> None:  # noqa: ANN001
    """Shared corrupted run below the patch, skipped no-op copies: the numbers of the naive loop."""
    from bertstudio.core.patching.trace import heads_heatmap, set_up, states_heatmap

    head, clean, corrupted = TASKS[task]
    loaded = _loaded(checkpoint_factory, "bert", head, task)
    setup = set_up(loaded, task, clean, corrupted, None, None)
    batched = states_heatmap(loaded, setup, TaskControl())
    naive = states_heatmap(loaded, setup, TaskControl(), batched=False)
    for fast, slow in zip(batched, naive, strict=True):
        assert fast == pytest.approx(slow, abs=1e-6)
    heads, layers = heads_heatmap(loaded, setup, TaskControl())
    from bertstudio.core.patching.trace import _run, context_copy

    device = loaded.model.device
    for layer, row in enumerate(heads):
        for head_index, value in enumerate(row):
            alone = _run(loaded, setup, [[context_copy(setup, layer, head_index, device)]], len(row))[0]
            assert value == pytest.approx(alone, abs=1e-6)
    assert layers[1] == pytest.approx(_run(loaded, setup, [[context_copy(setup, 1, None, device)]], 2)[0],
                                      abs=1e-6)

"""The architecture matrix: every architecture x every command, what each does (the README's table).

`OUTCOMES` is the data the README's architecture table is rendered from; test_architecture_matrix.py
runs every cell and fails when a cell does something else than this table says.
"""

from __future__ import annotations

from tests.fixtures.checkpoints import ALL_ARCHITECTURES

NAMES = {"bert": "BERT", "distilbert": "DistilBERT", "roberta": "RoBERTa", "albert": "ALBERT", "electra": "ELECTRA",
         "deberta-v2": "DeBERTa-v2", "deberta-v3": "DeBERTa-v3", "modernbert": "ModernBERT",
         "xlm-roberta": "XLM-RoBERTa", "mpnet": "MPNet", "camembert": "CamemBERT", "eurobert": "EuroBERT",
         "longformer": "Longformer", "big_bird": "BigBird"}
# command -> (the head it runs on, the CLI arguments; {M} model folder, {O} an empty folder, {mask} the mask token,
# {data} a classification CSV, {suite} a classify suite, {corpus} a corpus file)
TEXT = "the cat sat on the mat ."
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "fill-mask": ("MaskedLM", ("fill-mask", "--model", "{M}", "the cat sat on the {mask} .", "--json")),
    "fill-mask --per-layer": ("MaskedLM", ("fill-mask", "--model", "{M}", "the cat sat on the {mask} .",
                                           "--per-layer", "--json")),
    "nsp": ("NextSentencePrediction", ("nsp", "--model", "{M}", "the cat sat .", "the dog ran .", "--json")),
    "ner": ("TokenClassification", ("ner", "--model", "{M}", "john lives in paris .", "--json")),
    "qa": ("QuestionAnswering", ("qa", "--model", "{M}", "--question", "who sat ?", "--context", TEXT, "--json")),
    "classify": ("SequenceClassification", ("classify", "--model", "{M}", TEXT, "--json")),
    "choice": ("MultipleChoice", ("choice", "--model", "{M}", "--prompt", "the cat", "--choice", "sat .",
                                  "--choice", "ran .", "--json")),
    "similarity": ("Model", ("similarity", "--model", "{M}", "the cat sat .", "the dog ran .", "--json")),
    "attention": ("Model", ("attention", "--model", "{M}", TEXT, "--json")),
    "attention --qk --norms": ("Model", ("attention", "--model", "{M}", TEXT, "--layer", "0", "--head", "1", "--qk",
                                         "--norms", "--json")),
    "explain (every method)": ("SequenceClassification", ("explain", "--model", "{M}", "--task", "classify", TEXT,
                                                          "--method", "{method}", "--steps", "4", "--samples", "8",
                                                          "--json")),
    "heads off": ("SequenceClassification", ("classify", "--model", "{M}", TEXT, "--ablate-heads", "0:1", "--json")),
    "head importance": ("SequenceClassification", ("head-importance", "--model", "{M}", "--task", "classify", TEXT,
                                                   "--json")),
    "counterfactual": ("SequenceClassification", ("counterfactual", "--model", "{M}", "--task", "classify", TEXT,
                                                  "--method", "ablation", "--json")),
    "evaluate": ("SequenceClassification", ("evaluate", "--model", "{M}", "--task", "classify", "--data", "{data}",
                                            "--json")),
    "check": ("SequenceClassification", ("check", "--model", "{M}", "--suite", "{suite}", "--json")),
    "patch": ("SequenceClassification", ("patch", "--model", "{M}", "--task", "classify", TEXT, "--corrupted",
                                         "the dog ran on the mat .", "--json")),
    "corpus search": ("Model", ("neighbours", "--model", "{M}", "--corpus", "{corpus}", "--layer", "1",
                                "--sentences", "the bat flew", "--json")),
    "train": ("MaskedLM", ("train", "--task", "classify", "--model", "{M}", "--train", "{data}", "--output", "{O}/full",
                           "--max-steps", "1", "--batch-size", "4", "--max-length", "32", "--json")),
    "train --lora, merge": ("MaskedLM", ("train", "--task", "classify", "--model", "{M}", "--train", "{data}",
                                         "--output", "{O}/lora", "--max-steps", "1", "--batch-size", "4",
                                         "--max-length", "32", "--lora", "4", "--json")),
    "export onnx": ("SequenceClassification", ("export", "--model", "{M}", "--task", "classify", "--format", "onnx",
                                               "--output", "{O}/m.onnx", "--no-speed", "--json")),
}
METHODS = ("gradient", "grad-x-input", "integrated-gradients", "occlusion", "lime", "kernel-shap")
# (architecture, command) -> what its one-line refusal says; every other cell runs and equals its reference
NO_NSP = "transformers has no nsp head"
REFUSED: dict[tuple[str, str], str] = {
    **{(arch, "nsp"): NO_NSP for arch in ALL_ARCHITECTURES if arch != "bert"},
    ("eurobert", "qa"): "transformers has no qa head for EuroBERT",
    ("eurobert", "choice"): "transformers has no multiple-choice head for EuroBERT",
    ("big_bird", "attention"): "block-sparse attention gives no attention weights",
    ("big_bird", "attention --qk --norms"): "block-sparse attention gives no attention weights",
    ("longformer", "export onnx"): "fails in onnxruntime on inputs of other lengths",
}
# cells that run, with what the table says beside them
NOTED: dict[tuple[str, str], str] = {
    ("longformer", "attention"): "banded",
    ("longformer", "attention --qk --norms"): "banded",
    **{(arch, "attention --qk --norms"): "q·k ≠ score" for arch in ("deberta-v2", "deberta-v3", "mpnet",
                                                                      "modernbert", "eurobert")},
}


# cells a dedicated test already checks more closely, for the architectures it lists: the matrix does
# not run them twice (test_architecture_matrix checks that each of these tests still lists them)
COVERED: dict[str, tuple[str, str]] = {
    "patch": ("tests.core.test_patching", "ARCHS"),  # every state and head against hand-written hooks
    "similarity": ("tests.core.test_similarity", "ARCHITECTURES"),  # both poolings, by hand
    "export onnx": ("tests.core.test_export_onnx", "ARCHITECTURES"),  # every head, onnxruntime on real texts
}


def covered_by(arch: str, command: str) -> str:
    """The test module that checks this cell instead of the matrix ("" when the matrix runs it)."""
    if command not in COVERED:
        return ""
    import importlib

    module, name = COVERED[command]
    return module if arch in getattr(importlib.import_module(module), name) else ""


def outcome(arch: str, command: str) -> str:
    """The table's cell: ✓, ✓ with a note, or ✗ (refused in one line)."""
    if (arch, command) in REFUSED:
        return "✗"
    return f"✓ ({NOTED[(arch, command)]})" if (arch, command) in NOTED else "✓"


def table() -> str:
    """The README's architecture table (commands as rows, architectures as columns)."""
    header = "| command | " + " | ".join(NAMES[a] for a in ALL_ARCHITECTURES) + " |"
    rule = "|---|" + "---|" * len(ALL_ARCHITECTURES)
    rows = [f"| {command} | " + " | ".join(outcome(a, command) for a in ALL_ARCHITECTURES) + " |"
            for command in COMMANDS]
    reasons = sorted({reason for reason in REFUSED.values()})
    return "\n".join([header, rule, *rows, "", "✗: refused in one line; the reasons: " + "; ".join(reasons) + "."])


if __name__ == "__main__":
    print(table())

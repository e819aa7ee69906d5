"""A working command line per command: the fuzzer starts from these and changes one or two arguments,
so most cases get past argument parsing into loading, reading and running (where the bugs are)."""

from __future__ import annotations

from pathlib import Path

from tests.fuzz.inputs import Inputs


def seeds(inputs: Inputs, out: Path) -> dict[str, list[list[str]]]:
    mlm, classifier, tagger, reader = inputs.models[:4]
    data = {Path(path).name: path for path in inputs.data}
    suites = {Path(path).name: path for path in inputs.suites}
    reviews, corpus = data["reviews_train.csv"], data["pretraining_corpus.txt"]
    sae = str(inputs.sae)
    return {
        "attention": [["attention", "--model", mlm, "the cat sat"],
                      ["attention", "--model", mlm, "--out", str(out / "a.npz"), "the cat sat"]],
        "check": [["check", "--model", classifier, "--suite", suites["sentiment.json"]],
                  ["check", "--model", tagger, "--suite", suites["ner.json"], "--failures", str(out / "f.conll")]],
        "choice": [["choice", "--model", mlm, "--prompt", "Where?", "--choice", "Paris", "--choice", "Rome"]],
        "classify": [["classify", "--model", classifier, "good film"],
                     ["classify", "--model", classifier, "--file", reviews]],
        "counterfactual": [["counterfactual", "--model", classifier, "--task", "classify", "a good film"]],
        "erase": [["erase", "--model", mlm, "--layer", "1", "--concept", data["concept.csv"]]],
        "evaluate": [["evaluate", "--model", classifier, "--task", "classify", "--data", reviews],
                     ["evaluate", "--model", tagger, "--task", "ner", "--data", data["ner_train.conll"]],
                     ["evaluate", "--model", reader, "--task", "qa", "--data", data["qa.json"]]],
        "explain": [["explain", "--model", classifier, "--task", "classify", "a good film"]],
        "export": [["export", "--model", classifier, "--task", "classify", "--output", str(out / "m.onnx"),
                    "--no-speed"]],
        "features train": [["features", "train", "--model", mlm, "--layer", "1", "--corpus", corpus,
                            "--output", str(out / "sae"), "--epochs", "1"]],
        "features encode": [["features", "encode", "--sae", sae, "the cat"]],
        "features show": [["features", "show", "--sae", sae, "--feature", "0"]],
        "features lens": [["features", "lens", "--model", mlm, "--corpus", corpus, "--output", str(out / "lens"),
                           "--epochs", "1"]],
        "fill-mask": [["fill-mask", "--model", mlm, "the [MASK] sat"]],
        "head-importance": [["head-importance", "--model", classifier, "--task", "classify", "a good film"]],
        "models": [["models", "--models-dir", str(inputs.inputs / "models")]],
        "neighbours": [["neighbours", "--model", mlm, "--corpus", corpus, "--layer", "1", "the cat"]],
        "ner": [["ner", "--model", tagger, "Anna lives in Paris"]],
        "nsp": [["nsp", "--model", mlm, "It rained.", "The street was wet."]],
        "patch": [["patch", "--model", classifier, "--task", "classify", "a good film", "--corrupted", "a bad film"]],
        "qa": [["qa", "--model", reader, "--question", "Where?", "--context", "Anna lives in Paris."]],
        "runs": [["runs", "--runs-dir", str(inputs.runs)], ["runs", "--runs-dir", str(inputs.runs), "--json"]],
        "select": [["select", "--model", classifier, "--pool", reviews, "--count", "3"],
                   ["select", "--model", classifier, "--pool", reviews, "--count", "2", "--strategy", "margin",
                    "--json"]],
        "similarity": [["similarity", "--model", mlm, "a cat", "a dog"]],
        "train": [["train", "--task", "classify", "--model", classifier, "--train", reviews, "--output",
                   str(out / "model"), "--max-steps", "2", "--batch-size", "4", "--max-length", "16"]],
    }

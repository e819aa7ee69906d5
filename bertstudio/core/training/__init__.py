"""Fine-tuning and pre-training on transformers' Trainer (no Qt): see engine.py.

Import what you use from its module (training.config, training.engine...): the package imports
nothing itself. The task packages' trainables (core/tasks/<task>/train.py) build on training.base,
and the registry (trainable.py, which config.py and engine.py import) reads every task's spec; a
package that imported the engine would re-enter the spec registry halfway through the first spec.
"""

"""Curating a training set with a model's help: k-fold cross-validation and its out-of-fold
probabilities, label issues found in them (cleanlab), and the pool rows to label next (active
learning). Above core/training and core/tasks: it asks them, they never ask it."""

"""What if: the smallest edits of an input that flip a task's prediction (counterfactuals).

`search.find` searches word edits proposed by a generator (`generators`: a masked LM's
substitutions, HotFlip's gradient-guided flips, removals) and returns only edits that the
task's own `run` confirms change the label. Each task's spec says how (`CounterfactualAdapter`,
functions in `tasks.py`); nothing here names a task.
"""

"""A model on a whole labelled dataset: metrics, slices, errors, comparison, projection."""

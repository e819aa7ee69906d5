"""One module per capability, each in the pipelines' preprocess -> forward -> postprocess shape."""

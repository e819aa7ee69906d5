"""Export for deployment: a loaded model with its task head written as ONNX (onnx.py), checked
against PyTorch with onnxruntime and timed beside PyTorch and int8; ort_model.py runs the file."""

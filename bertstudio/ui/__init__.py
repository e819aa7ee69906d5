"""The Qt layer: widgets render, workers run, core decides."""

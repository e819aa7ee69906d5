"""Run history: every training run recorded (config, data fingerprint, metrics, curves, folder),
read back for the Runs page and `bertstudio runs`, compared config by config."""

"""Pre-training heads (MLM + NSP): a model class for training/, not a one-input task."""

from __future__ import annotations


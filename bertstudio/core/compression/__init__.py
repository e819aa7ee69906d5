"""What compression costs: linear CKA per layer pair, salience agreement, size and speed of two models."""

"""Train tab parts: the settings form generated from the config fields, and where a run may save."""

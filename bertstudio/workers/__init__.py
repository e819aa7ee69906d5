"""Qt adapters that run core functions off the GUI thread (superqt workers on the global pool)."""

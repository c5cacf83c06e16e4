"""The machine's limits: its peak arithmetic and memory bandwidth, probed once and cached."""

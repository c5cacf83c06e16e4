"""The Sweep tab: a grid of quick comparisons, its table, plot and sentences."""

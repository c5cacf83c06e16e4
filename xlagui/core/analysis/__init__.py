"""Statistics over events, free of processes: paired ratios, accuracy, the comparison, the ranking
of arms, efficiency."""

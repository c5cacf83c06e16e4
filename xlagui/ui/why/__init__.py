"""The "Why" tab: where each step's time goes, every compile and recompile, and whether the
numbers stay the same (issue 29); its plots serve the PNG's panel too."""

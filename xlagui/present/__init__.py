"""Formatting for people, without Qt: figures with units, verdict rows, run traces.

The CLI, the window and the PNG report all call these, so a figure reads the same everywhere.
"""

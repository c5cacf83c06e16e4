"""What every room uses: small widgets, background tasks, dialogs, the theme, the plots.

Nothing here imports pyqtgraph but `plots.py`, which only the plotting rooms load.
"""

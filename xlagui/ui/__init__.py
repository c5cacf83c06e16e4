"""The desktop app: widgets over `xlagui.core`, and the QThread that supervises a comparison.

Nothing here imports TensorFlow. pyqtgraph is imported only by the plotting modules, which the
main window loads after it is on screen.
"""

from __future__ import annotations

from xlagui.ui.shared.qtcheck import refuse_broken_pyside

refuse_broken_pyside()

"""A folder (or a model file) dropped anywhere on the window: what a drag carries, in words,
and the overlay.

Children that take drops themselves (a spin box takes text, a plot takes anything) would keep
a folder's drag to themselves: `FolderDrops.watch` hands those drags to the window's handler.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject, Signal
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from xlagui.core.model.sources import source_for_path
from xlagui.present.models import model_file_kinds
from xlagui.ui.shared.dialogs import DropOverlay

DRAG_EVENTS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop,
               QEvent.Type.DragLeave)


def model_file(mime: QMimeData) -> Path | None:
    """The model a drag carries (one local file or folder a model source accepts:
    `sources.source_for_path`; a SavedModel folder is a model, never a dataset), else None."""
    urls = mime.urls() if mime.hasUrls() else []
    if len(urls) != 1 or not urls[0].isLocalFile():
        return None
    path = Path(urls[0].toLocalFile())
    return path if path.exists() and source_for_path(path) is not None else None


def classify_drop(mime: QMimeData) -> tuple[Path | None, str]:
    """What a drag carries, in words: (the folder to open, "") or (None, why not)."""
    urls = [u for u in mime.urls()] if mime.hasUrls() else []
    local = [Path(u.toLocalFile()) for u in urls if u.isLocalFile()]
    if not urls:
        return None, "Drop a folder from your file manager here."
    if len(urls) > 1:
        return None, (f"Drop one dataset folder at a time (this is {len(urls)} items). "
                      "Put the class folders inside one folder and drop that.")
    if not local:
        return None, "Only folders on this computer can be opened (this is a web link)."
    path = local[0]
    if path.is_file():
        return None, (f"“{path.name}” is a file. Drop the folder that holds the class "
                      "folders (or the train/ and test/ folders), or a model file "
                      f"({model_file_kinds()}).")
    if not path.is_dir():
        return None, f"“{path}” does not exist (any more)."
    return path, ""


class FolderDrops(QObject):
    """The window's drop handling: shows `overlay` while a drag is over the window (or a
    watched child) and says what dropping would open.

    Signals:
        folder_dropped(object Path): a folder was dropped.
        model_file_dropped(object Path): a model (a `.keras`, `.h5` or `.py` file, a
            SavedModel folder) was dropped.
        refused(str why): something else was dropped; why it cannot be opened, in words.
    """

    folder_dropped = Signal(object)
    model_file_dropped = Signal(object)
    refused = Signal(str)

    def __init__(self, window: QWidget, overlay: DropOverlay) -> None:
        # The window is reached as Qt's parent, not held: it must not sit in a reference cycle.
        super().__init__(window)
        self.overlay = overlay

    def watch(self, root: QWidget) -> None:
        """Hand folder drags over `root`'s children that take drops themselves to the window."""
        for child in root.findChildren(QWidget):
            if child.acceptDrops() and child is not self.parent():
                child.installEventFilter(self)
                if isinstance(child, QAbstractScrollArea):
                    child.viewport().installEventFilter(self)

    def enter(self, event: QDragEnterEvent) -> None:
        mime = event.mimeData()
        if not mime.hasUrls():
            event.ignore()
            return
        model = model_file(mime)
        folder, why = classify_drop(mime)
        if model is not None:
            self.overlay.show_for(True, f"Drop to train the model in “{model.name}”")
        elif folder is not None:
            self.overlay.show_for(True, f"Drop to open “{folder.name}”")
        else:
            self.overlay.show_for(False, why)
        event.acceptProposedAction()

    def leave(self) -> None:
        self.overlay.hide()

    def drop(self, event: QDropEvent) -> None:
        self.overlay.hide()
        model = model_file(event.mimeData())
        folder, why = classify_drop(event.mimeData())
        event.acceptProposedAction()
        if model is not None:
            self.model_file_dropped.emit(model)
        elif folder is None:
            self.refused.emit(why)
        else:
            self.folder_dropped.emit(folder)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.parent() or not isinstance(obj, QWidget) \
                or event.type() not in DRAG_EVENTS:
            return super().eventFilter(obj, event)
        if event.type() == QEvent.Type.DragLeave:
            self.leave()
            return True
        if not isinstance(event, QDropEvent) or not event.mimeData().hasUrls():
            return super().eventFilter(obj, event)
        if isinstance(event, QDragEnterEvent):
            self.enter(event)
        elif isinstance(event, QDragMoveEvent):
            event.acceptProposedAction()
        else:
            self.drop(event)
        return True

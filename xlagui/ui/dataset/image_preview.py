"""One image of the dataset shown larger, decoded off the GUI thread."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from xlagui.present.units import size_bytes
from xlagui.ui.dataset.thumbnails import decode_image
from xlagui.ui.shared.tasks import TaskOwner
from xlagui.ui.shared.widgets import ImageLabel

if TYPE_CHECKING:
    from xlagui.core.data.scan import ImageFile
    from xlagui.core.protocol.task import TaskState

PREVIEW_SIZE = 360


class ImagePreview(QFrame):
    """One image shown larger, with its file name, pixel size and format. Showing another
    image (or none) supersedes the decoding of the one before.

    Signals: none.
    """

    def __init__(self, pool: QThreadPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Card")
        self._pool = pool
        self._decoding = TaskOwner(self)
        self._decoding.done.connect(self._on_decoding_done)
        self._decoding.failed.connect(self._on_decoding_failed)
        self.file: ImageFile | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        self.image = ImageLabel("Click a thumbnail to see it larger")
        self.image.setObjectName("Placeholder")
        self.image.setMinimumSize(220, 220)
        self.name = QLabel()
        self.name.setObjectName("Figure")
        self.name.setWordWrap(True)
        self.name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info = QLabel()
        self.info.setObjectName("Caption")
        self.info.setWordWrap(True)
        layout.addWidget(self.image, 1)
        layout.addWidget(self.name)
        layout.addWidget(self.info)

    def show_file(self, f: ImageFile) -> None:
        self.file = f
        self.name.setText(os.path.basename(f.path))
        self.info.setText(
            f"{f.width} × {f.height} px · {f.format} · {f.color or f.mode} · "
            f"{size_bytes(f.size_bytes)}\n{f.split} / {f.label} · {f.rel}"
        )
        self.image.clear_image("Loading…")

        def decode(_state: TaskState, path: str = f.path) -> QImage:
            return decode_image(path, PREVIEW_SIZE)

        self._decoding.start(decode, self._pool)

    def clear(self) -> None:
        self._decoding.cancel()
        self.file = None
        self.image.clear_image("Click a thumbnail to see it larger")
        self.name.setText("")
        self.info.setText("")

    def _on_decoding_done(self, image: QImage) -> None:
        self.image.set_image(QPixmap.fromImage(image))

    def _on_decoding_failed(self, exc: BaseException, _details: str) -> None:
        self.image.clear_image(f"Cannot show this image: {exc}")

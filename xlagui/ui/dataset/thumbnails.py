"""A lazily loaded thumbnail grid: only the thumbnails in view are decoded, off the GUI thread.

Decoding happens off the GUI thread with Pillow (JPEGs are decoded at a reduced scale with
`Image.draft`) into a QImage; the GUI thread only turns finished QImages into QPixmaps. The rows
in view are decoded as one batch, owned by a `TaskOwner`: scrolling on starts a new batch, which
cancels the old one, so loads that scrolled out of view are skipped and never arrive. A bounded
cache keeps memory flat whatever the size of the folder.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSize,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QListView, QWidget

from xlagui.present.units import size_bytes
from xlagui.ui.shared.tasks import TaskOwner

if TYPE_CHECKING:
    from xlagui.core.data.scan import ImageFile
    from xlagui.core.protocol.task import TaskState

THUMB_SIZE = 96
CACHE_LIMIT = 800  # pixmaps kept; 96 px RGBA is ~37 KB each
VISIBLE_MARGIN_ROWS = 2  # rows above and below the viewport loaded ahead of scrolling

ImageFileRole = Qt.ItemDataRole.UserRole + 1
ModelIndex = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()


def decode_image(path: str, size: int) -> QImage:
    """Decode `path` scaled to fit in size×size, as a QImage. Runs in any thread."""
    import numpy as np
    from PIL import Image, ImageOps

    with Image.open(path) as im:
        im.draft("RGB", (size, size))  # JPEG: let libjpeg decode at 1/2, 1/4 or 1/8 scale
        im.seek(0)
        frame = ImageOps.exif_transpose(im) or im
        if frame.mode.startswith("I") or frame.mode == "F":
            # 16/32-bit or float grayscale: stretch to 8 bits for display.
            arr = np.asarray(frame, dtype=np.float64)
            top = float(arr.max()) or 1.0
            frame = Image.fromarray((arr * (255.0 / top)).clip(0, 255).astype(np.uint8), "L")
        frame.thumbnail((size, size), Image.Resampling.BILINEAR)
        rgba = frame.convert("RGBA")
    data = rgba.tobytes("raw", "RGBA")
    w, h = rgba.size
    return QImage(data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()


def placeholder_pixmap(size: int = THUMB_SIZE) -> QPixmap:
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#e7eaee"))
    p.drawRoundedRect(4, 4, size - 8, size - 8, 6, 6)
    p.end()
    return pm


def decode_batch(state: TaskState, paths: Sequence[str], size: int, workers: int) -> None:
    """Decode `paths` in `workers` threads, reporting each as a partial result (path, QImage or
    None if unreadable); once `state` is interrupted, the decodes not yet begun are skipped."""

    def one(path: str) -> QImage | None:
        if state.is_interruption_requested():
            return None
        try:
            return decode_image(path, size)
        except Exception:  # an unreadable file keeps its placeholder
            return None

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="xlagui-thumb") as pool:
        futures = {pool.submit(one, path): path for path in paths}
        for future in as_completed(futures):
            state.set_partial((futures[future], future.result()))


class ThumbnailModel(QAbstractListModel):
    """The images of one class and split, with thumbnails decoded on demand.

    Signals:
        thumbnail_ready(str path): a thumbnail was decoded and is now shown.
    """

    thumbnail_ready = Signal(str)

    def __init__(self, parent: QObject | None = None, size: int = THUMB_SIZE) -> None:
        super().__init__(parent)
        self.size = size
        self.files: list[ImageFile] = []
        self._row_of: dict[str, int] = {}
        self._cache: OrderedDict[str, QPixmap] = OrderedDict()
        self._batch: frozenset[str] = frozenset()  # what the running batch decodes
        self._pending: frozenset[str] = frozenset()  # what it has not decoded yet
        self._placeholder = placeholder_pixmap(size)
        self._workers = max(1, min(4, (os.cpu_count() or 2) - 1))
        self.pool = QThreadPool(self)  # for single images: the preview, a problem's files
        self.pool.setMaxThreadCount(self._workers)
        self._batch_pool = QThreadPool(self)
        self._batch_pool.setMaxThreadCount(1)
        self._loading = TaskOwner(self)
        self._loading.partial.connect(self._on_loading_partial)
        self._loading.done.connect(self._on_loading_done)

    # -- Qt model interface -----------------------------------------------------------------

    def rowCount(self, parent: ModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.files)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.files):
            return None
        f = self.files[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return os.path.basename(f.path)
        if role == Qt.ItemDataRole.DecorationRole:
            return self._cache.get(f.path, self._placeholder)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"{f.rel}\n{f.width} × {f.height} px, {f.format}, {f.color or f.mode}, "
                    f"{size_bytes(f.size_bytes)}")
        if role == ImageFileRole:
            return f
        return None

    # -- what the view and panel call -------------------------------------------------------

    def set_files(self, files: list[ImageFile]) -> None:
        self.beginResetModel()
        self._loading.cancel()
        self._batch = self._pending = frozenset()
        self.pool.clear()
        self.files = list(files)
        self._row_of = {f.path: i for i, f in enumerate(self.files)}
        self.endResetModel()

    def request_rows(self, first: int, last: int) -> None:
        """Decode the thumbnails of rows first..last (inclusive) not yet cached; forget the
        wish for any other row."""
        if not self.files:
            return
        first = max(0, first)
        last = min(len(self.files) - 1, last)
        missing = []
        for path in (self.files[r].path for r in range(first, last + 1)):
            if path in self._cache:
                self._cache.move_to_end(path)
            else:
                missing.append(path)
        wanted = frozenset(missing)
        if self._loading.is_running() and wanted <= self._batch and self._pending <= wanted:
            return  # the running batch covers these and decodes nothing else
        self._batch = self._pending = wanted
        if not missing:
            self._loading.cancel()
            return
        size, workers = self.size, self._workers
        self._loading.start(lambda state: decode_batch(state, missing, size, workers),
                            self._batch_pool)

    def is_cached(self, path: str) -> bool:
        return path in self._cache

    def is_loading(self) -> bool:
        """Whether thumbnails in view are still being decoded."""
        return self._loading.is_running()

    def shutdown(self) -> None:
        """Drop queued loads and wait briefly for the running ones (the window is closing)."""
        self._loading.cancel()
        self.pool.clear()
        self.pool.waitForDone(2000)
        self._batch_pool.waitForDone(2000)

    # -- loading ----------------------------------------------------------------------------

    def _on_loading_partial(self, loaded: tuple[str, QImage | None]) -> None:
        path, image = loaded
        self._pending = self._pending - {path}
        if image is None or image.isNull():
            return
        self._cache[path] = QPixmap.fromImage(image)
        while len(self._cache) > CACHE_LIMIT:
            self._cache.popitem(last=False)
        row = self._row_of.get(path)
        if row is not None:
            idx = self.index(row)
            self.dataChanged.emit(idx, idx, [Qt.ItemDataRole.DecorationRole])
        self.thumbnail_ready.emit(path)

    def _on_loading_done(self, _result: None) -> None:
        self._batch = self._pending = frozenset()


class ThumbnailView(QListView):
    """An icon grid that tells its `ThumbnailModel` which rows are in view.

    Signals:
        image_activated(object ImageFile): an image was clicked or chosen with the keyboard.
    """

    image_activated = Signal(object)

    def __init__(self, parent: QWidget | None = None, size: int = THUMB_SIZE) -> None:
        super().__init__(parent)
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setMovement(QListView.Movement.Static)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setUniformItemSizes(True)
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(400)
        self.setIconSize(QSize(size, size))
        self.setGridSize(QSize(size + 24, size + 30))
        self.setSpacing(4)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setSelectionMode(QListView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self._request_timer = QTimer(self)
        self._request_timer.setSingleShot(True)
        self._request_timer.setInterval(25)
        self._request_timer.timeout.connect(self._on_request_timer_timeout)
        self.verticalScrollBar().valueChanged.connect(self._on_scroll_value_changed)
        # Items are laid out in batches: what is in view can change as the layout grows.
        self.verticalScrollBar().rangeChanged.connect(self._on_scroll_range_changed)
        self.clicked.connect(self._on_item_clicked)
        self.activated.connect(self._on_item_clicked)

    def setModel(self, model: Any) -> None:
        super().setModel(model)
        model.modelReset.connect(self.schedule_requests)
        sel = self.selectionModel()
        sel.currentChanged.connect(self._on_current_changed)

    def schedule_requests(self) -> None:
        self._request_timer.start()

    def visible_rows(self) -> tuple[int, int]:
        """First and last row in view, with a margin of a few rows on either side."""
        model = self.model()
        count = model.rowCount() if model is not None else 0
        if count == 0:
            return (0, -1)
        vp = self.viewport()
        top = self.indexAt(QPoint(self.spacing() + 2, self.spacing() + 2))
        grid = self.gridSize()
        cols = max(1, vp.width() // max(1, grid.width()))
        rows = vp.height() // max(1, grid.height()) + 1
        first = top.row() if top.isValid() else max(0, self.verticalScrollBar().value()
                                                      // max(1, grid.height()) * cols)
        first = max(0, first - VISIBLE_MARGIN_ROWS * cols)
        last = min(count - 1, first + (rows + 2 * VISIBLE_MARGIN_ROWS) * cols)
        return first, last

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self.schedule_requests()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self.schedule_requests()

    def _on_scroll_value_changed(self, _value: int) -> None:
        self.schedule_requests()

    def _on_scroll_range_changed(self, _low: int, _high: int) -> None:
        self.schedule_requests()

    def _on_request_timer_timeout(self) -> None:
        model = self.model()
        if isinstance(model, ThumbnailModel):
            first, last = self.visible_rows()
            model.request_rows(first, last)

    def _on_item_clicked(self, index: QModelIndex) -> None:
        f = index.data(ImageFileRole)
        if f is not None:
            self.image_activated.emit(f)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self._on_item_clicked(current)

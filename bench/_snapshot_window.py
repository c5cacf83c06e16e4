"""The window's visible texts for the wording snapshot (`bench/snapshot_words.py`): one main
window, offscreen, as the tests build it (no worker, no device probe, a CPU without flags, the
corpus as its history), that reopens each saved comparison and opens each bad dataset.

What counts as a visible text: the text of every visible label, button, group box and tab, every
cell and header of a table, every item of a tree or list, every text box, combo box and line
edit, and every text item drawn in a plot (pyqtgraph's titles, axis labels, legends and
notes; not the tick numbers). Rich text is read as plain text. Each tab's texts are a sorted
list of "kind: text", so a widget that moves keeps its words in place.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from _snapshot_common import Texts, share
from PySide6.QtCore import QEvent, QEventLoop, QSettings, QTimer
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QGraphicsTextItem,
    QGraphicsView,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QTabBar,
    QTableWidget,
    QTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

TAB_DATASET, TAB_RUNS, TAB_HISTORY, TAB_XLA = range(4)


def _tick(*names: str) -> Callable[[Any], None]:
    def change(panel: Any) -> None:
        for name, box in panel.arm_boxes.items():
            box.setChecked(name in names)
    return change


def _autocluster(panel: Any) -> None:
    """The XLA side's mode: the auto-clustering radio button (`SettingsForm.mode_buttons`)."""
    from xlagui.core.protocol.modes import XlaMode

    panel.mode_buttons[XlaMode.AUTOCLUSTER].setChecked(True)


def _gpu(panel: Any) -> None:
    panel.device.setCurrentIndex(1)


def _both(*changes: Callable[[Any], None]) -> Callable[[Any], None]:
    def change(panel: Any) -> None:
        for one in changes:
            one(panel)
    return change


def _set(name: str, value: object) -> Callable[[Any], None]:
    """Set the panel's widget `name` to `value` (a spin box's value, a box's tick)."""
    def change(panel: Any) -> None:
        widget = getattr(panel, name)
        if isinstance(value, bool):
            widget.setChecked(value)
        else:
            widget.setValue(value)
    return change


# What a user sets in the sidebar (each from the defaults): the settings panel's own widgets.
SETTINGS: dict[str, Callable[[Any], None]] = {
    "defaults": _both(),
    "one epoch": _set("epochs", 1),
    "three repeats": _set("repeats", 3),
    "48 px, batch 4": _both(_set("image_size", 48), _set("batch_size", 4)),
    "36 px": _set("image_size", 36),
    "batch 512": _set("batch_size", 512),
    "bf16": _tick("bf16"),
    "fp16 and jit+bf16": _tick("fp16", "jit+bf16"),
    "every arm": _tick("autocluster", "bf16", "fp16", "jit+bf16", "jit+fp16"),
    "A/A check": _set("check", True),
    "auto-clustering": _autocluster,
    "XLA off": _set("xla", False),
    "budget 30 s": _set("budget", 30),
    "the GPU": _gpu,
    "the GPU, every arm": _both(_gpu, _tick("bf16", "fp16", "jit+bf16")),
}


def readable(text: str) -> str:
    if GuiQt.mightBeRichText(text):
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()
    return text


def _tree_texts(tree: QTreeWidget) -> list[str]:
    out: list[str] = []
    header = tree.headerItem()
    if header is not None and not tree.isHeaderHidden():
        out += [f"header: {header.text(c)}" for c in range(tree.columnCount())]

    def walk(item: QTreeWidgetItem) -> None:
        out.extend(f"tree: {item.text(c)}" for c in range(tree.columnCount()))
        for i in range(item.childCount()):
            child = item.child(i)
            if child is not None:
                walk(child)

    for i in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(i)
        if top is not None:
            walk(top)
    return out


def _table_texts(table: QTableWidget) -> list[str]:
    out = []
    for c in range(table.columnCount()):
        item = table.horizontalHeaderItem(c)
        if item is not None and table.horizontalHeader().isVisible():
            out.append(f"header: {item.text()}")
    for r in range(table.rowCount()):
        for c in range(table.columnCount()):
            cell = table.item(r, c)
            if cell is not None:
                out.append(f"cell: {cell.text()}")
            elif (inner := table.cellWidget(r, c)) is not None and isinstance(inner, QLabel):
                out.append(f"cell: {readable(inner.text())}")
    return out


def _plot_texts(view: QGraphicsView) -> list[str]:
    scene = view.scene()
    if scene is None:
        return []
    return [f"plot: {item.toPlainText()}" for item in scene.items()
            if isinstance(item, QGraphicsTextItem) and item.isVisible()]


def widget_texts(w: QWidget) -> list[str]:
    """The texts `w` itself shows (not its children's)."""
    if isinstance(w, QLabel):
        return [f"label: {readable(w.text())}"]
    if isinstance(w, QAbstractButton):
        return [f"button: {w.text()}"]
    if isinstance(w, QGroupBox):
        return [f"group: {w.title()}"]
    if isinstance(w, QTabBar):
        return [f"tab: {w.tabText(i)}" for i in range(w.count())]
    if isinstance(w, QTableWidget):
        return _table_texts(w)
    if isinstance(w, QTreeWidget):
        return _tree_texts(w)
    if isinstance(w, QListWidget):
        return [f"list: {w.item(i).text()}" for i in range(w.count())]
    if isinstance(w, (QTextEdit, QPlainTextEdit)):
        return [f"text: {w.toPlainText()}"]
    if isinstance(w, QComboBox):
        return [f"combo: {w.currentText()}"]
    if isinstance(w, QLineEdit):
        return [f"line edit: {w.text() or w.placeholderText()}"]
    if isinstance(w, QGraphicsView):
        return _plot_texts(w)
    return []


def visible_texts(root: QWidget) -> list[str]:
    """Every visible text under `root`, sorted; empty texts left out."""
    texts = [t for w in [root, *root.findChildren(QWidget)] if w.isVisible()
             for t in widget_texts(w)]
    return sorted(t for t in texts if t.split(": ", 1)[1].strip())


class WindowTexts:
    """One main window over the corpus folder, and the texts it shows."""

    def __init__(self, corpus: Path, work: Path) -> None:
        from xlagui.core.machine import cpu
        from xlagui.ui.shared import dialogs

        self.app = QApplication.instance() or QApplication([])
        cpu.cpu_flags = lambda *_a, **_k: frozenset()
        self.dialogs: list[str] = []
        dialogs.show_error = self._record_dialog  # type: ignore[assignment]
        from xlagui.ui.window.main_window import MainWindow

        settings = QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat)
        self.window = MainWindow(settings=settings, history_root=corpus, preload_plots=False)
        self.window.resize(1400, 900)
        self.window.show()
        self.window.history_panel.refresh()
        self._wait(self.window.history_panel.refreshed, 30_000)
        # History's tab is `history_tab`: the whole corpus.
        self.empty = {self.window.tabs.tabText(i): self._tab(i)
                      for i in (TAB_DATASET, TAB_RUNS, TAB_XLA)}

    def _record_dialog(self, _parent: Any, title: str, text: str, *rest: Any) -> None:
        self.dialogs.append(f"{title}: {text} {' '.join(str(r) for r in rest[:1])}".strip())

    def _wait(self, signal: Any, timeout_ms: int) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(timeout_ms, loop.quit)
        loop.exec()
        signal.disconnect(loop.quit)

    def _settle(self) -> None:
        """Run what the event loop would: posted events, then the deferred deletions
        (`processEvents` alone never deletes a `deleteLater`'d widget, which would then
        still show its words beside the new ones)."""
        self.app.processEvents()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        self.app.processEvents()

    def _tab(self, index: int) -> list[str]:
        self.window.tabs.setCurrentIndex(index)
        self._settle()
        page = self.window.tabs.widget(index)
        return visible_texts(page) if page is not None else []

    def _messages(self) -> list[str]:
        shown, self.dialogs = self.dialogs, []
        return [*visible_texts(self.window.message_bar), *shown,
                f"status: {self.window.statusBar().currentMessage()}"]

    def reopened(self, folder: Path) -> Texts:
        """The Runs and "What XLA did" tabs of the comparison in `folder`, reopened."""
        self._settle()
        if not self.window.open_history_item(folder):
            return {"refused": self._messages()}
        return {"runs": self._tab(TAB_RUNS), "what xla did": share(self._tab(TAB_XLA)),
                "messages": self._messages()}

    def history_tab(self) -> Texts:
        self.window.history_panel.refresh()
        self._wait(self.window.history_panel.refreshed, 30_000)
        return self._tab(TAB_HISTORY)

    def dataset_texts(self, path: Path) -> Texts:
        """The Dataset tab after opening `path`, and what the window said."""
        loop = QEventLoop()
        w = self.window
        for signal in (w.dataset_loaded, w.dataset_failed):
            signal.connect(loop.quit)
        QTimer.singleShot(30_000, loop.quit)
        w.open_dataset(path)
        loop.exec()
        for signal in (w.dataset_loaded, w.dataset_failed):
            signal.disconnect(loop.quit)
        texts = {"dataset": self._tab(TAB_DATASET), "messages": self._messages(),
                 "cannot run": w.cannot_run_reason()}
        w.dataset_panel.shutdown()  # no thumbnail keeps a file of the dataset open
        return texts

    def settings_texts(self, work: Path) -> Texts:
        """The sidebar (settings, their notes, the arms' hardware notes, the run hint) for
        settings a user picks, on a split dataset and an auto-split one, without and with a
        GPU."""
        from tests.helpers.images import make_class_folders, make_split_dataset

        split = work / "split"
        # Enough images for the default batch (64): the notes are those of a usable dataset.
        make_split_dataset(split, {"african": 40, "asian": 40}, {"african": 5, "asian": 5},
                           size=(40, 30))
        auto = work / "auto"
        make_class_folders(auto, {"cats": 50, "dogs": 50}, size=(40, 30))
        out: dict[str, Texts] = {}
        for name, path in (("split", split), ("auto", auto)):
            self.dataset_texts(path)
            for gpu in (False, True):
                self.window.settings_panel.set_devices(
                    [{"id": "cpu", "name": "CPU", "kind": "CPU"}]
                    + ([{"id": "gpu:0", "name": "NVIDIA H200", "kind": "GPU"}] if gpu else []))
                for scenario, change in SETTINGS.items():
                    out[f"{name}, {'GPU' if gpu else 'CPU only'}, {scenario}"] = self._settings(
                        change)
        return out

    def _settings(self, change: Callable[[Any], None]) -> Texts:
        panel = self.window.settings_panel
        panel.reset_defaults()
        change(panel)
        panel.validate()
        self._settle()
        return {"sidebar": visible_texts(self.window.sidebar),
                "cannot run": self.window.cannot_run_reason()}

    def close(self) -> None:
        self.window.dataset_panel.shutdown()
        self.window.close_without_asking()
        self.app.processEvents()

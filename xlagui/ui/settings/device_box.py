"""The device list of the settings: this computer's (or the SSH host's) CPU and GPUs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QWidget

GPU_NONE_TIP = (
    "TensorFlow sees no GPU on this machine (no CUDA device, or a TensorFlow build without "
    "GPU support), so runs use the CPU."
)


class DeviceBox(QComboBox):
    """The devices a comparison can run on, the CPU first; each entry's data is its device id
    ("cpu", "gpu:0", or "all" for every GPU).

    Signals: QComboBox's; filling the list and selecting in it emit none.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(QStandardItemModel(self))

    def show_devices(self, devices: list[dict[str, str]] | None, preferred: str) -> bool:
        """Fill the list: CPU first; GPUs disabled with a reason when none is found. `None`
        means the machine has not said yet. Selects `preferred` if it is there and enabled,
        else the CPU; says whether a GPU was found."""
        model: QStandardItemModel = self.model()  # type: ignore[assignment]
        self.blockSignals(True)
        model.clear()
        unknown = devices is None
        found = list(devices or [])
        cpu = next((d for d in found if d.get("kind") == "CPU"), None)
        name = (cpu or {}).get("name", "")
        cpu_item = QStandardItem(f"CPU — {name}" if name and name != "CPU" else "CPU")
        cpu_item.setData("cpu", Qt.ItemDataRole.UserRole)
        model.appendRow(cpu_item)
        gpus = [d for d in found if d.get("kind") == "GPU"]
        for d in gpus:
            label = d["name"] if d["id"] == "all" else f"GPU {d['id'][4:]} — {d['name']}"
            item = QStandardItem(label)
            item.setData(d["id"], Qt.ItemDataRole.UserRole)
            model.appendRow(item)
        if not gpus:
            item = QStandardItem("GPU — looking for GPUs…" if unknown else "GPU — none found")
            item.setData("gpu:0", Qt.ItemDataRole.UserRole)
            item.setEnabled(False)
            item.setToolTip("Asking TensorFlow which devices it sees, in a helper process…"
                            if unknown else GPU_NONE_TIP)
            model.appendRow(item)
        self.setToolTip("" if gpus or unknown else GPU_NONE_TIP)
        self.select(preferred)
        self.blockSignals(False)
        return bool(gpus)

    def select(self, device_id: str) -> None:
        """Select `device_id` if it is listed and enabled, else the CPU."""
        model: QStandardItemModel = self.model()  # type: ignore[assignment]
        row = next((r for r in range(model.rowCount())
                    if model.item(r).data(Qt.ItemDataRole.UserRole) == device_id
                    and model.item(r).isEnabled()), 0)
        blocked = self.blockSignals(True)
        self.setCurrentIndex(row)
        self.blockSignals(blocked)

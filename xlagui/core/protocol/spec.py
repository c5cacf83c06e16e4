"""What the parent hands a worker process: `RunSpec`, written to the run's `spec.json`.

Both sides import it from here: the supervisor (`xlagui.core.measure.worker_process`) writes it and
the worker (`xlagui.core.worker.child`) reads it back, so the child does not import the parent's
supervision code to learn its own orders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xlagui.core.protocol.arms import Arm, Precision, record_arm, record_fields
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.identity import DumpChoice, WorkerMode, as_variant
from xlagui.core.protocol.jsoncodec import JSONObject, JSONValue, ProtocolError, decode, plain

SPEC_FILE = "spec.json"  # a run's spec in its folder: the parent writes it, the worker reads it
SAMPLE_FIELDS = ("path", "label", "format", "mode")  # a sample's order in spec.json


# Formats and modes TensorFlow's own decoders handle; anything else (CMYK JPEG, 16-bit PNG,
# TIFF, WebP, ...) is decoded by Pillow inside the pipeline.
# GIFs go to Pillow too: TensorFlow refuses colour indices past a short colour table, which
# Pillow (and every image viewer) accepts.
TF_FORMATS = frozenset({"JPEG", "PNG", "BMP"})
TF_MODES = frozenset({"RGB", "RGBA", "L", "LA", "P", "PA", "1"})


@dataclass(frozen=True)
class Sample:
    """One image as the pipeline needs it: where it is, its class index, how to decode it."""

    path: str
    label: int
    format: str = "JPEG"
    mode: str = "RGB"

    @property
    def tf_decodable(self) -> bool:
        return self.format in TF_FORMATS and self.mode in TF_MODES


@dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs to train once: the parent writes it to the run's spec.json
    (`to_json`), the worker reads it back (`from_json`, every field's type checked)."""

    run_id: str
    variant: str  # a `Role` member (baseline, xla, check) or another arm's canonical name
    xla_mode: XlaMode
    config: RunConfig
    class_names: list[str]
    train: list[Sample]
    val: list[Sample]
    run_dir: Path
    repeat: int = 1
    mode: WorkerMode = WorkerMode.TRAIN
    precision: Precision = Precision.FLOAT32  # the Keras dtype policy
    xla_dump: DumpChoice = DumpChoice.TEXT  # what XLA writes to run_dir/xla
    tensorboard_dir: str = ""  # where a training worker writes TensorBoard scalars; "" for none
    # The arm: the value of every lever it changes, by lever name (`Arm.levers`); None (a
    # caller that gives only `xla_mode` and `precision`): read from those, which stay filled.
    levers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        # Strings given for the identities (older callers, tests) become their enums.
        object.__setattr__(self, "variant", as_variant(self.variant))
        object.__setattr__(self, "mode", WorkerMode(self.mode))
        object.__setattr__(self, "xla_dump", DumpChoice(self.xla_dump))
        for name, value in record_fields(record_arm(vars(self), self.levers)).items():
            object.__setattr__(self, name, value)

    @property
    def arm(self) -> Arm:
        """The arm this worker applies: every lever's value."""
        return Arm(**(self.levers or {}))

    def to_dict(self) -> JSONObject:
        def samples(items: list[Sample]) -> JSONValue:
            # A sample is a short array (path, label, format, mode): thousands of them.
            return [[s.path, s.label, s.format, s.mode] for s in items]

        return {
            "run_id": self.run_id,
            "mode": self.mode.value,
            "variant": str(self.variant),
            "xla_mode": self.xla_mode.value,
            "precision": self.precision.value,
            "levers": dict(self.levers or {}),
            "repeat": self.repeat,
            "config": plain(self.config),
            "class_names": list(self.class_names),
            "train": samples(self.train),
            "val": samples(self.val),
            "run_dir": str(self.run_dir),
            "xla_dump": self.xla_dump.value,
            "tensorboard_dir": self.tensorboard_dir,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, data: object) -> RunSpec:
        """The spec a parent wrote; `ProtocolError` names a field of the wrong type."""
        if isinstance(data, dict):
            data = dict(data)
            for split in ("train", "val"):
                items = data.get(split)
                if isinstance(items, list):
                    data[split] = [_sample_object(item, f"{split}[{i}]")
                                   for i, item in enumerate(items)]
        return decode(cls, data, "run spec")

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProtocolError(f"run spec: not JSON ({exc})") from None
        return cls.from_dict(data)


def _sample_object(item: JSONValue, where: str) -> JSONValue:
    if not isinstance(item, list) or not 2 <= len(item) <= len(SAMPLE_FIELDS):
        raise ProtocolError(
            f"run spec: field {where!r} should be [path, label, format, mode], got {item!r}"
        )
    return dict(zip(SAMPLE_FIELDS, item, strict=False))  # format and mode may be left out

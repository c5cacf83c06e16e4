"""What every worker builds before its first step (`set_up`): the input pipeline and the model,
with the arm applied (every lever's value, `xlagui.core.worker.levers`) and read back, so that a
run that did not get what it asked for says so (or is refused, for a baseline); and what every
run adds to its summary when it ends (`finish_summary`: memory peaks, cache, what XLA did).
"""

from __future__ import annotations

import dataclasses
import os
import platform
import sys
from typing import Any

from xlagui.core.data.pipeline import build_datasets, warm_cache
from xlagui.core.machine.cpu import cpu_name
from xlagui.core.machine.device import Device, DeviceKind
from xlagui.core.model.build import build_compiled
from xlagui.core.protocol.arms import parse_arm, record_fields
from xlagui.core.protocol.events import PROTOCOL_VERSION, RunSummary, StartedEvent
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.levers import JAX_BACKEND, TF_BACKEND
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.worker.backends import (
    TrainSteps,
    current_backend,
    framework_version,
    share_initial_weights,
    train_steps,
    watch_jax_compiles,
)
from xlagui.core.worker.compiles import CompileWatch, XlaCompiling, watch_compiles
from xlagui.core.worker.flags import check_flags
from xlagui.core.worker.io import EventSink
from xlagui.core.worker.levers import apply_before_build, check_levers
from xlagui.core.xla import evidence as xla_evidence
from xlagui.core.xla import hlo

# The modules of Keras' jitted step functions in a JAX worker's dump.
JAX_STEP_MODULES = frozenset({"jit_train_step", "jit_test_step", "jit_predict_step"})


class Setup:
    """What both kinds of worker build before the first step: the pipeline and the model,
    with the arm applied, what its levers' checks read back (`facts`), and the watch on its
    step functions' compilations (`compiles`)."""

    def __init__(self, tf: Any, model: Any, datasets: Any, facts: dict[str, Any],
                 compiles: CompileWatch | None = None) -> None:
        self.tf = tf
        self.model = model
        self.datasets = datasets
        self.facts = facts
        # A setup built without one (a test's) watches nothing and sends nothing.
        self.compiles = compiles or CompileWatch(None, None, XlaCompiling.NONE)
        self._steps: TrainSteps | None = None

    @property
    def steps(self) -> TrainSteps:
        """The model's train steps on this backend, called outside `fit` (built once: on JAX
        they carry the model's state from call to call, `TrainSteps.sync`)."""
        if self._steps is None:
            sample = next(iter(self.datasets.train.take(1))) \
                if current_backend() != TF_BACKEND else None
            self._steps = train_steps(self.model, sample)
        return self._steps

    def steps_synced(self) -> None:
        """What the train steps trained, put back on the model (before evaluating or saving)."""
        if self._steps is not None:
            self._steps.sync()

    @property
    def in_effect(self) -> bool:
        """Whether XLA is on, as the XLA lever's check read it back."""
        return bool(self.facts.get("xla_in_effect", False))


def set_up(spec: RunSpec, sink: EventSink, mode: WorkerMode) -> Setup:
    """Build the pipeline and the model of `spec` with its arm applied, read back what is in
    effect, and say it in the `started` event."""
    # Before TensorFlow loads here: XLA would abort this process on a flag it does not know.
    check_flags(spec.arm.effective(spec.config))
    # lazy: TensorFlow must load after the parent's environment is in place (XLA flags, the
    # dump folder, the visible devices), and `--probe` or `--tensorboard-text` need none of it
    import keras
    import tensorflow as tf

    config = spec.config
    device = Device.parse(config.device)
    backend = current_backend()
    if backend == JAX_BACKEND:
        watch_jax_compiles()
    apply_arm(tf, keras, spec)
    gpus = tf.config.list_physical_devices("GPU")
    if device.is_gpu and not gpus:
        raise RuntimeError(
            f"device {config.device} was asked for but TensorFlow sees no GPU on this machine"
        )
    if mode is WorkerMode.MEASURE:
        # Two measuring workers share the GPU: each takes only what it uses.
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
    datasets = build_datasets(
        spec.train,
        spec.val,
        num_classes=len(spec.class_names),
        image_size=config.image_size,
        batch_size=config.batch_size,
        seed=config.seed,
        augment=config.augment,
        cache_dir=spec.run_dir / "cache",
        drop_remainder=config.drop_remainder,
    )
    warm_cache(datasets)
    model = _build_model(tf, spec, device)
    if shares_weights(spec):
        # Before anything trains it: the same starting weights on every backend.
        share_initial_weights(model, spec.run_dir.parent.parent, backend)
    facts = check_levers(tf, model, spec.arm.effective(config))
    sink.emit(_started(spec, mode, tf, keras, device, gpus, datasets, facts, sink.now()))
    # Before Keras builds its step functions: the watch counts their traces.
    compiles = watch_compiles(model, datasets, sink, _xla_compiling(spec, facts))
    return Setup(tf, model, datasets, facts, compiles)


def apply_arm(tf: Any, keras: Any, spec: RunSpec) -> None:
    """The arm's levers that are set inside the process, before the model is built (the parent
    set the environment's: `LeverValue.env`), then the seed: the arm as this comparison applies
    it (`Arm.effective`: the comparison's levers for every worker, the arm's own winning)."""
    apply_before_build(tf, keras, spec.arm.effective(spec.config))
    keras.utils.set_random_seed(spec.config.seed)


def shares_weights(spec: RunSpec) -> bool:
    """Whether this comparison has an arm on another backend than TensorFlow: its workers then
    share the baseline's initial weights (`backends.share_initial_weights`)."""
    arms = [spec.arm, *(parse_arm(name) for name in spec.config.arms)]
    return any(arm.effective(spec.config).backend != TF_BACKEND for arm in arms)


def _xla_compiling(spec: RunSpec, facts: dict[str, Any]) -> XlaCompiling:
    """How XLA compiles this run's step functions: not at all, strictly (`jit_compile`), or
    lazily (auto-clustering)."""
    if not facts.get("xla_in_effect", False):
        return XlaCompiling.NONE
    return XlaCompiling.LAZY if spec.xla_mode.facts.autoclusters else XlaCompiling.STRICT


def _started(spec: RunSpec, mode: WorkerMode, tf: Any, keras: Any, device: Device, gpus: list[Any],
             datasets: Any, facts: dict[str, Any], setup_seconds: float) -> StartedEvent:
    config = spec.config
    return StartedEvent(
        protocol=PROTOCOL_VERSION,
        mode=mode,
        run_id=spec.run_id,
        variant=spec.variant,
        device_name=_device_name(tf, device, gpus),
        device_kind=device.kind_word,
        versions={
            "python": platform.python_version(),
            "tensorflow": tf.__version__,
            "keras": keras.__version__,
            "platform": platform.platform(),
            **_backend_versions(),
        },
        config=config,
        seed=config.seed,
        class_names=spec.class_names,
        train_count=datasets.train_count,
        val_count=datasets.val_count,
        steps_per_epoch=datasets.steps_per_epoch,
        pid=os.getpid(),
        setup_seconds=setup_seconds,
        **record_fields(spec.arm),  # the arm asked for: every lever's value
        **facts,  # what the levers' checks read back
    )


def _backend_versions() -> dict[str, str]:
    """The Keras backend this worker ran on, and its framework's version where it is not
    TensorFlow's."""
    backend = current_backend()
    version = framework_version()
    return {"backend": backend, **({backend: version} if version else {})}


def _build_model(tf: Any, spec: RunSpec, device: Device) -> Any:
    """The model the comparison chose (`config.model`: a built-in, a .keras or a .py file),
    compiled with what the arm's levers pass to `model.compile` (the XLA mode's `jit_compile`);
    on every GPU at once for device "all"."""
    config = spec.config

    def build() -> Any:
        return build_compiled(config.model, config.image_size, len(spec.class_names),
                              config.seed,
                              **spec.arm.effective(config).compile_arguments()).model

    if device.kind is not DeviceKind.ALL:
        return build()
    with tf.distribute.MirroredStrategy().scope():
        return build()


def _device_name(tf: Any, device: Device, gpus: list[Any]) -> str:
    """The device the run trains on, in words: the GPU's name ("2 × NVIDIA H200" for every
    GPU at once), or the CPU's model."""
    if device.is_gpu and gpus:
        details = tf.config.experimental.get_device_details(
            gpus[min(device.gpu_index, len(gpus) - 1)]
        )
        logical = tf.config.list_logical_devices("GPU")
        name = str(details.get("device_name", logical[0].name if logical else "GPU"))
        return f"{len(gpus)} × {name}" if device.kind is DeviceKind.ALL else name
    return cpu_name() or "CPU"


def finish_summary(spec: RunSpec, setup: Setup, summary: RunSummary) -> RunSummary:
    """`summary` with what every run adds at its end: memory peaks, the cache, the XLA mode as
    asked and as read back, the evidence that XLA compiled, and what XLA did."""
    run_dir = spec.run_dir
    sys.stderr.flush()
    setup.steps_synced()
    arm = spec.arm.effective(spec.config)
    # On JAX every eager op compiles a module of its own (initializers, conversions): the
    # step functions' modules are what XLA did for training.
    modules = JAX_STEP_MODULES if arm.backend == JAX_BACKEND else None
    return dataclasses.replace(
        summary,
        peak_rss_bytes=peak_rss_bytes(),
        peak_device_bytes=_peak_device_bytes(setup.tf, Device.parse(spec.config.device)),
        cache=setup.datasets.cache,
        xla_mode=spec.xla_mode,
        xla_in_effect=setup.in_effect,
        xla_evidence=xla_evidence.collect(run_dir / "xla", run_dir / "worker.log", modules),
        # What XLA did, read from the dump (about 20 ms for this CNN), kept in the summary so a
        # reopened comparison has it when the dump folder is gone.
        xla_did=hlo.read_dump(run_dir / "xla", run_dir / "worker.log", modules)
        if arm.compiles_with_xla
        else None,
    )


def peak_rss_bytes() -> int | None:
    try:
        import resource  # lazy: Unix only; the ImportError picks Windows' way

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)
    except ImportError:  # Windows
        import psutil  # lazy: Windows only

        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss))


def _peak_device_bytes(tf: Any, device: Device) -> int | None:
    if not device.is_gpu:
        return None  # TensorFlow reports no device memory for the CPU; peak RSS covers it
    try:
        return int(tf.config.experimental.get_memory_info(f"GPU:{device.gpu_index}")["peak"])
    except Exception:  # older drivers or builds do not report it
        return None

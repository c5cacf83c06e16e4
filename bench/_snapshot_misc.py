"""The words of the wording snapshot (`bench/snapshot_words.py`) that come from outside its
corpus of comparisons: the bad-dataset corpus's scans, the errors of workers and hosts, the
arms, the models, the hosts, random arm sets' recommendations, a grid of verdicts, and the
command line's help and refusals. One small function per source, as in the main script."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import signal
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from _snapshot_common import Texts, attempt, plain

from xlagui.core.analysis.pairs import Recommendation
from xlagui.core.analysis.stats import Comparison
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.spec import RunSpec

ARM_NAMES = ("jit", "autocluster", "bf16", "fp16", "jit+bf16", "jit+fp16", "autocluster+bf16")
FLAG_SETS = {"no flags": frozenset(), "AVX512-BF16": frozenset({"avx512_bf16"}),
             "AMX": frozenset({"amx_bf16", "amx_fp16"}), "AVX512-FP16": frozenset({"avx512_fp16"})}


def in_old_words(path: Path) -> None:
    """Rewrite a saved comparison.json as versions before verdicts were data wrote it:
    sentences, nothing typed (tests/present/test_verdicts.py does the same)."""
    from xlagui.present.verdicts import recommendation_sentence, verdict_sentence

    data = json.loads(path.read_text(encoding="utf-8"))
    comp = data["comparison"]
    words = "OLD: " + verdict_sentence(Comparison.from_dict(comp))
    rec = comp.pop("recommendation", None)
    comp["recommendation"] = recommendation_sentence(Recommendation.from_dict(rec)) if rec else ""
    for arm in (comp.get("interleaved") or {}).get("arms") or []:
        arm["accuracy_text"] = "in words" if arm.pop("accuracy", None) else ""
        arm["accuracy_from"] = "after the 40 steps of the measurement"
    for key in ("break_even", "accuracy"):
        comp.pop(key, None)
    comp.update(verdict=words, accuracy_text="", break_even_text="", break_even_epoch=None)
    path.write_text(json.dumps(data), encoding="utf-8")


# -- the bad-dataset corpus ---------------------------------------------------------------------

@contextlib.contextmanager
def patched(prep: Any) -> Iterator[None]:
    """The case's simulated faults in this process, undone afterwards."""
    saved: list[tuple[Any, str, Any]] = []

    def setattr_(obj: Any, name: str, value: Any) -> None:
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    prep.patch(setattr_)
    try:
        yield
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


def scan_words(path: Path) -> Texts:
    """The scan's summary and its problems, through the API."""
    from xlagui.core.data.scan import DatasetError, scan_dataset

    try:
        scan = scan_dataset(path)
    except DatasetError as exc:
        return {"refused": str(exc)}
    from xlagui.present.scan import summary_text

    return {"summary": summary_text(scan).splitlines(),
            "problems": [[p.severity, p.kind, p.message] for p in scan.problems]}


def compare_scan_lines(path: Path) -> Texts:
    """What `xlagui compare` says of the dataset's problems before it measures."""
    from _snapshot_common import console, printed

    from xlagui.cli.compare import _say_scan
    from xlagui.core.data.scan import DatasetError, scan_dataset

    try:
        scan = scan_dataset(path)
    except DatasetError:
        return None
    con = console()
    ok = _say_scan(scan, con)
    return {"trains": ok, "lines": printed(con).splitlines()}


def cli(*argv: str) -> Texts:
    """`xlagui ARGV` in this process: its exit status, stdout and stderr."""
    from xlagui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code: Any = main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return {"exit": code, "stdout": out.getvalue().splitlines(),
            "stderr": err.getvalue().splitlines()}


def bad_datasets(work: Path, window: Any) -> Texts:
    from tests.helpers.corpus import CASES, prepared

    out: dict[str, Texts] = {}
    for case in CASES:
        with prepared(case, work / case.name) as prep, patched(prep):
            texts = {"scan": attempt(scan_words, prep.root),
                     "cli scan": attempt(cli, "scan", str(prep.root)),
                     "cli compare": attempt(compare_scan_lines, prep.root)}
            if window is not None:
                texts["window"] = attempt(window.dataset_texts, prep.root)
            out[case.name] = texts
    return out


# -- errors -------------------------------------------------------------------------------------

def _spec(work: Path, mode: str = "train", variant: str = "xla") -> RunSpec:
    return RunSpec("02-xla-r1", variant, XlaMode.JIT if variant == "xla" else XlaMode.OFF,
                   RunConfig(batch_size=8, image_size=48), ["a", "b"], [], [], work / "run",
                   mode=mode, precision="float32")


class _Named(Exception):
    """An exception that calls itself what TensorFlow's would."""


def _exception(name: str, text: str) -> BaseException:
    made: BaseException = type(name, (_Named,), {})(text)
    return made


WORKER_FAILURES: dict[str, Callable[[], BaseException]] = {
    "oom": lambda: _exception("ResourceExhaustedError", "Graph execution error:\n\nOOM when "
                              "allocating tensor with shape[64,32,146,146]"),
    "memory": MemoryError,
    "bad_alloc": lambda: RuntimeError("std::bad_alloc"),
    "xla": lambda: _exception("InternalError", "XLA compilation requires a fixed tensor list"),
    "jit": lambda: ValueError("jit_compile failed for this op"),
    "gpu": lambda: _exception("InternalError", "CUDA runtime implicit initialization on GPU:0 "
                              "failed"),
    "missing file": lambda: FileNotFoundError(2, "No such file or directory", "/data/a.jpg"),
    "permission": lambda: PermissionError(13, "Permission denied", "/data/a.jpg"),
    "other": lambda: ValueError("Graph execution error:\n\nDetected at node x:\ninput is bad"),
    "empty": lambda: RuntimeError(""),
}


def worker_errors(work: Path) -> Texts:
    """The worker's error message and hint for typical failures (`worker/errors.py` makes the
    event, `present/errors.py` words its advice)."""
    from xlagui.core.worker.errors import error_event, error_message
    from xlagui.present.errors import error_hint

    config = RunConfig(batch_size=8, image_size=48)
    return {name: {"message": error_message(make()),
                   "hint": error_hint(error_event(make(), config))}
            for name, make in WORKER_FAILURES.items()}


def died(work: Path) -> Texts:
    """The supervisor's account of a worker that ended without a word (`died_event`, its
    advice worded by `present/errors.py`)."""
    from xlagui.core.measure.ended import died_event
    from xlagui.present.errors import error_hint

    out = {}
    logs = {"no log": "", "oom log": "terminate called after throwing 'std::bad_alloc'\n"}
    for (log_name, log), code, mode in itertools.product(
            logs.items(), (-int(signal.SIGKILL), -int(signal.SIGTERM), -99, 1), ("train",
                                                                                 "measure")):
        spec = _spec(work, mode)
        spec.run_dir.mkdir(parents=True, exist_ok=True)
        (spec.run_dir / "worker.log").write_text(log, encoding="utf-8")
        event = died_event(code, spec.run_dir / "worker.log", spec)
        out[f"{log_name}, exit {code}, {mode}"] = [event.error_type, event.message,
                                                   error_hint(event)]
    return out


BAD_LINES = {
    "not json": "Traceback (most recent call last):",
    "unknown type": '{"type": "nope", "t": 1.0}',
    "wrong field": '{"type": "epoch", "t": 1.0, "epoch": "two"}',
    "old protocol": '{"type": "started", "t": 1.0, "protocol": 5, "mode": "train"}',
}


def refused_lines(work: Path) -> Texts:
    """The malformed-line policy's error for each kind of bad line (`ChildProcess._refuse`,
    its advice worded by `present/errors.py`)."""
    from xlagui.core.measure.worker_process import WorkerProcess
    from xlagui.core.protocol.events import (
        ErrorEvent,
        ProtocolError,
        StartedEvent,
        check_protocol,
        parse_event,
    )
    from xlagui.present.errors import error_hint

    out = {}
    for name, line in BAD_LINES.items():
        try:
            event = parse_event(line)
            if isinstance(event, StartedEvent):
                check_protocol(event)
            out[name] = ["decoded"]
            continue
        except ProtocolError as exc:
            refused = WorkerProcess(_spec(work))._refuse(exc, line)
        out[name] = [refused.type, getattr(refused, "message", ""),
                     error_hint(refused) if isinstance(refused, ErrorEvent) else ""]
    return out


class _FakeSsh:
    """What `preflight` and `SshTransport` use of an `Ssh`: its target and `run`."""

    def __init__(self, host: str, answer: tuple[int, str, str] = (0, "", "")) -> None:
        from xlagui.core.measure.transports.base import Target

        self.target = Target(host, python="~/venv/bin/python")
        self.answer = answer

    def run(self, command: str, **_kwargs: Any) -> Any:
        import subprocess

        code, out, err = self.answer
        return subprocess.CompletedProcess([command], code, out.encode(), err.encode())


def host_errors(work: Path) -> Texts:
    """The hosts' errors: ssh's failures, each preflight refusal, a lost connection."""
    from xlagui import __version__
    from xlagui.core.measure.transports.base import MachineError
    from xlagui.core.measure.transports.ssh.client import connection_error
    from xlagui.core.measure.transports.ssh.hostside import NO_TENSORFLOW
    from xlagui.core.measure.transports.ssh.preflight import preflight
    from xlagui.present.hosts import error_text

    out: dict[str, Texts] = {}
    for stderr in ("ssh: Could not resolve hostname gpu-box: Name or service not known",
                   "ssh: connect to host gpu-box port 22: Connection refused",
                   "me@gpu-box: Permission denied (publickey).", "kex_exchange: weird", ""):
        err = connection_error(_FakeSsh("gpu-box").target, 255, stderr)
        out[f"ssh: {stderr or 'nothing said'}"] = None if err is None else error_text(err)
    ok = json.dumps({"xlagui": __version__, "protocol": 6})
    answers = {"no python": (127, "", "sh: 1: python: not found"),
               "nothing printed": (1, "", "Segmentation fault"),
               "no xlagui": (1, json.dumps({"missing": "No module named 'xlagui'"}), ""),
               "other version": (0, json.dumps({"xlagui": "0.0.1", "protocol": 2}), ""),
               "stopped early": (1, ok, "Killed"),
               # What the host's side says of a missing TensorFlow (`hostside.describe`).
               "no tensorflow": (0, ok + "\n" + json.dumps({NO_TENSORFLOW: "No module named "
                                                            "'tensorflow'"}), "")}
    for name, answer in answers.items():
        try:
            preflight(_FakeSsh("gpu-box", answer))  # type: ignore[arg-type]
            out[f"preflight: {name}"] = "answered"
        except MachineError as exc:
            out[f"preflight: {name}"] = [exc.kind.value, error_text(exc)]
    out["connection lost"] = attempt(_lost, work)
    return plain(out)


def _lost(work: Path) -> Texts:
    from _snapshot_corpus import HOST

    from xlagui.core.measure.jobs import WorkerJob
    from xlagui.core.measure.transports.ssh.transport import SshTransport
    from xlagui.present.errors import error_hint

    transport = SshTransport(_FakeSsh("gpu-box"), HOST)  # type: ignore[arg-type]
    spec = _spec(work, "measure")
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    (spec.run_dir / "worker.log").write_text("Connection to gpu-box closed by remote host.\n")
    event = transport.died(255, spec.run_dir / "worker.log", WorkerJob.of(spec))
    return [event.error_type, event.message, error_hint(event)]


# -- arms, models, hosts ------------------------------------------------------------------------

def arms_words() -> Texts:
    from xlagui.core.protocol import arms
    from xlagui.core.protocol.problems import policy_problems
    from xlagui.present.levers import arm_description, arm_label, hardware_note, mode_words
    from xlagui.present.problems import arm_problems

    out: dict[str, Texts] = {}
    for name in ARM_NAMES:
        arm = arms.parse_arm(name)
        read_backs: dict[str, dict[str, object]] = {"as asked": {"policy": arm.precision.value,
                                   "compute_dtype": arm.precision.compute_dtype,
                                   "loss_scale": True},
                      "float32": {"policy": "float32", "compute_dtype": "float32"},
                      "nothing": {}}
        out[name] = {
            "name": arm.name, "label": arm_label(arm), "description": arm_description(arm),
            "notes": {f"{kind}, {flags}": hardware_note(arm, kind, FLAG_SETS[flags])
                      for kind in ("CPU", "GPU") for flags in FLAG_SETS},
            "policy problems": {k: arm_problems(policy_problems(arm.precision, v))
                                for k, v in read_backs.items()},
        }
    out["modes"] = {m.value: {"label": mode_words(m).label, "short": mode_words(m).short,
                              "words": mode_words(m).words, "brief": mode_words(m).brief,
                              "how": mode_words(m).how} for m in XlaMode}
    out["default also"] = {f"{kind}, {flags}": list(arms.default_also(kind, FLAG_SETS[flags]))
                           for kind in ("CPU", "GPU") for flags in FLAG_SETS}
    return out


def models_words() -> Texts:
    from xlagui.core.model.check import MemoryGuard
    from xlagui.core.model.sources import builtin_names
    from xlagui.core.protocol.config import ModelChoice
    from xlagui.core.protocol.events import ModelEvent
    from xlagui.present.models import memory_warning, model_line, models_rows

    choices = [ModelChoice("builtin", name) for name in builtin_names()]
    choices += [ModelChoice("keras", "m", "/m/m.keras", "ab" * 32, params=1234, new_head=True),
                ModelChoice("python", "p", "/m/p.py", "cd" * 32, params=99)]
    checks = [ModelEvent(model=ModelChoice("builtin", n, params=1000 * i), image_size=96,
                         fixed_input_size=i % 2 == 0, batch_size=8,
                         flops_per_step=None if i % 3 == 0 else 1.5e9 * i,
                         flops_note="the model's HLO could not be read" if i % 3 == 0 else "",
                         compile_words="Adam + categorical_crossentropy")
              for i, n in enumerate(builtin_names(), start=1)]
    config = RunConfig(batch_size=64, image_size=150)
    return {
        "lines": [model_line(RunConfig(model=c), None) for c in choices]
        + [model_line(RunConfig(model=k.model), k) for k in checks],
        "memory": [memory_warning(MemoryGuard(per, workers, free), config)
                   for per, workers, free in ((2**30, 1, 2**33), (3 * 2**30, 3, 2**32),
                                              (5 * 2**30, 1, 2**31))],
        "rows": plain(models_rows(checks)),
    }


def hosts_words() -> Texts:
    from _snapshot_corpus import HOST

    from xlagui.core.measure.transports.base import PlacedDataset
    from xlagui.present.hosts import dataset_line, device_words, host_line, host_rows

    return {
        "rows": plain(host_rows(HOST)), "line": host_line(HOST), "devices": device_words(HOST),
        "datasets": [dataset_line(d, "gpu-box") for d in (
            PlacedDataset(PurePosixPath("/c/datasets/ab12"), 120, cached=True),
            PlacedDataset(PurePosixPath("/data/pets"), 120),
            PlacedDataset(PurePosixPath("/c/datasets/ab12"), 120, 35 * 2**20, 4.2))],
    }


def everything(work: Path, window: Any) -> dict[str, Texts]:
    from _snapshot_verdicts import random_arm_sets, verdict_grid

    work.mkdir(parents=True, exist_ok=True)
    return {
        "bad datasets": bad_datasets(work / "scan", window),
        "errors": {"worker": attempt(worker_errors, work), "died": attempt(died, work),
                   "bad lines": attempt(refused_lines, work),
                   "hosts": attempt(host_errors, work)},
        "arms": attempt(arms_words), "models": attempt(models_words),
        "hosts": attempt(hosts_words),
        "recommendations": attempt(random_arm_sets),
        "verdict grid": attempt(verdict_grid),
        "cli": attempt(cli_words, work),
    }


def cli_words(work: Path) -> Texts:
    """`--help` of every command, and the refusals of arguments that cannot run."""
    top = cli("--help")
    # The commands are listed one a line, indented by four spaces, under COMMAND.
    commands = [m.group(1) for line in top["stdout"]
                if (m := re.match(r"^    ([a-z][\w-]*)(?:\s|$)", line))]
    missing = str(work / "no-such-folder")
    # Each names a folder that is not there, so that nothing can start if it is not refused
    # (`xlagui compare` without a dataset runs the demo; `xlagui NAME` opens the window).
    refusals = {
        "bad arm": ("compare", missing, "--arms", "nope"),
        "tiny images": ("compare", missing, "--image-size", "8"),
        "unknown model": ("compare", missing, "--model", "nope"),
        "missing folder": ("compare", missing), "scan missing": ("scan", missing),
        "inspect missing": ("inspect", missing), "hosts without host": ("hosts",),
        "demo and a folder": ("compare", missing, "--demo"),
        "bad device": ("compare", missing, "--device", "tpu"),
        "bad budget": ("compare", missing, "--budget", "-1"),
    }
    return {"help": {"xlagui": top, **{c: cli(c, "--help") for c in commands}},
            "refusals": {name: cli(*argv) for name, argv in refusals.items()}}

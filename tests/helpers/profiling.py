"""Profile one arm of a comparison in a real worker (`profile_arm`): the spec the workflow
would write, then `python -m tests.helpers.profile_worker` with the dump on for an XLA arm.
Shared by `tests/core/worker/test_profile.py` and `bench/bench_explain.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from xlagui.core.compare import new_report, plan_measure_runs, spec_for
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.transports.environment import xla_flags
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.identity import DumpChoice, WorkerMode
from xlagui.core.protocol.spec import SPEC_FILE
from xlagui.core.protocol.why import ArmProfile


def profile_arm(dataset: Path, config: RunConfig, variant: str, out: Path, steps: int,
                timeout: float = 600) -> ArmProfile:
    """The `ArmProfile` of `variant` ("baseline", "xla") of `config` on `dataset`; the worker's
    files (profile.json, trace.json, the trace and the dump) under `out`."""
    scan = scan_dataset(dataset)
    report = new_report(scan, config, environment={})
    entry = next(e for e in plan_measure_runs(config) if e.variant == variant)
    spec = spec_for(entry, report, samples_from_scan(scan), out / "runs",
                    mode=WorkerMode.INSPECT)
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    (spec.run_dir / SPEC_FILE).write_text(spec.to_json(), encoding="utf-8")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if spec.xla_mode.asks_for_xla:
        env["XLA_FLAGS"] = xla_flags(spec.run_dir, DumpChoice.TEXT)
    done = subprocess.run(
        [sys.executable, "-m", "tests.helpers.profile_worker", str(spec.run_dir / SPEC_FILE),
         str(out), str(steps)], env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the profiling worker failed:\n{done.stderr[-3000:]}")
    return ArmProfile.from_dict(json.loads((out / "profile.json").read_text()))

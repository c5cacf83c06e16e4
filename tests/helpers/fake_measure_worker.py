"""A measuring worker without TensorFlow: speaks the measure protocol with synthetic timings.

`python tests/helpers/fake_measure_worker.py SPEC.json [OPTIONS]`. The spec's
`config.extra["fake"]`, and the JSON object OPTIONS over it (for a window, whose settings carry
no `extra`), say how it behaves:
- `step`: seconds per baseline step; `ratio`: this arm's step time ÷ the baseline's (0.5 unless
  said, like the fake training streams, where XLA is 2× faster; an arm with a mixed precision
  policy runs at 0.8 × that, so that arms rank); `ratios`: {variant: ratio} for given arms;
  `compile`: an XLA arm's extra first-step seconds (1.0);
- `accuracy`: {variant: validation accuracy after measuring} (0.75 unless said);
- the spec's `precision` is read back as the policy in effect (protocol 3), unless `policy`
  ({variant: policy}) says another one was (an arm that did not engage);
- `drift`: per-round slow-down, the same for every arm (the machine's drift); `jitter`: the
  arm's blocks alternate between ×(1 + jitter) and ×(1 − jitter); `jitters`: {variant: j}, that
  arm's blocks (the baseline's too) scaled by a seeded draw from 1 ± j, one per round;
- `sleep`: really sleep this share of the reported time, so blocks take wall time;
- `setup`: seconds slept before `started` without reading stdin, as a worker importing
  TensorFlow and decoding its images does (a cancel then goes unread); `warmup_sleep`: seconds
  the warm-up takes, never looking at a cancel, as an XLA compile does; `inspect_sleep`: the
  same for an XLA arm's inspection compile (`mode` "inspect"; the baseline's is quick);
- `die_at` / `hang_at`: a round at which the XLA arm exits with an error / sleeps ignoring
  cancel; `slow_at`: a round whose block sleeps 30 s but stops at a cancel; `protocol`;
- `other_share`: what else used the machine during every block (issue 37), judged by the spec's
  `busy_percent`.
- supervision (`tests/core/measure/test_worker_process.py`): `malformed`: a line written right after
  `started`; `ignore_cancel`: a `cancel` command changes nothing; `ignore_sigterm`: SIGTERM is
  ignored too (only a kill ends it); `warmup_dies`: at `warmup` the worker dies without a word,
  "sigkill" as the kernel's OOM killer ends a process, "memoryerror" of an uncaught MemoryError.
- arms (more than one arm besides the baseline): `ratios` maps a variant ("xla", "bf16", …) to
  its ratio (else `ratio`); `accuracy` maps a variant (or "baseline") to the validation accuracy
  reported at `finish` (0.9 unless said); `nan` lists variants whose losses are not finite;
  `ignore_policy` lists variants that read back float32 whatever they asked for.
Every command received is appended to `commands.log` in the run folder with its wall time, and
the wall time each block ended to `blocks.log` ("<time> <seq>").
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from xlagui.core.protocol.events import (
    PROTOCOL_VERSION,
    BlockEvent,
    CancelledEvent,
    FinishedEvent,
    RunSummary,
    StartedEvent,
    WarmupEvent,
    WorkerCommand,
)
from xlagui.core.protocol.interference import Interference, ProcessShare, is_disturbed
from xlagui.core.xla.evidence import XlaEvidence


def _interference(fake: dict, spec: dict, seconds: float) -> Interference | None:  # type: ignore[type-arg]
    """`other_share`: what else used the 2 cores during every block, judged by the spec's own
    threshold (`is_disturbed`), the process `spinner` named when disturbed; none read without."""
    if "other_share" not in fake:
        return None
    other = float(fake["other_share"])
    disturbed = is_disturbed(other, float(spec["config"].get("busy_percent", 10)))
    return Interference(seconds=seconds, cores=2, other_share=other, own_share=0.9,
                        disturbed=disturbed,
                        busiest=[ProcessShare("spinner", 4242, other)] if disturbed else [])


def main() -> int:
    if sys.argv[1] == "-":  # the spec as stdin's first line, as an SSH transport sends it
        spec = json.loads(sys.stdin.readline())
        if not Path(spec["run_dir"]).is_dir():  # made by the host's shell line, as for a real one
            return 3
    else:
        spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    fake = spec["config"].get("extra", {}).get("fake", {})
    if len(sys.argv) > 2:
        fake = {**fake, **json.loads(sys.argv[2])}
    variant = spec["variant"]
    is_arm = variant != "baseline"
    uses_xla = spec["xla_mode"] != "off"
    precision = spec.get("precision", "float32")
    ratio = float(fake.get("ratio", 0.5)) * (0.8 if precision != "float32" else 1.0)
    # The A/A check's twin ("check") is the baseline again unless `ratios` says otherwise.
    ratio = float((fake.get("ratios") or {}).get(variant, 1.0 if variant == "check" else ratio))
    step = float(fake.get("step", 0.01)) * (ratio if is_arm else 1.0)
    policy = (fake.get("policy") or {}).get(variant, precision)
    if variant in fake.get("ignore_policy", []):
        policy = "float32"
    compute = {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}.get(policy, "float32")
    loss = float("nan") if variant in fake.get("nan", []) else 0.5
    drift = float(fake.get("drift", 0.0))
    sleep_share = float(fake.get("sleep", 0.0))
    log = Path(spec["run_dir"]) / "commands.log"
    t0 = time.perf_counter()
    cancel = threading.Event()
    out = sys.stdout
    if fake.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def emit(event: object) -> None:
        event.t = round(time.perf_counter() - t0, 6)  # type: ignore[attr-defined]
        out.write(event.to_json() + "\n")  # type: ignore[attr-defined]
        out.flush()

    time.sleep(float(fake.get("setup", 0.0)))
    emit(
        StartedEvent(
            protocol=int(fake.get("protocol", PROTOCOL_VERSION)),
            mode="measure",
            run_id=spec["run_id"],
            variant=variant,
            xla_mode=spec["xla_mode"],
            xla_in_effect=uses_xla,
            device_name="Fake CPU",
            device_kind="CPU",
            pid=os.getpid(),
            val_count=int(fake.get("val_count", len(spec.get("val") or []))),
            precision=precision,
            policy=policy,
            compute_dtype=compute,
            variable_dtype="float32",
            output_dtype="float32",
            loss_scale=policy == "mixed_float16",
        )
    )
    if "malformed" in fake:
        out.write(str(fake["malformed"]) + "\n")
        out.flush()
    if spec.get("mode") == "inspect":  # the short compile with XLA's dump: nothing to time
        time.sleep(float(fake.get("inspect_sleep", 0.0)) if uses_xla else 0.0)
        evidence = XlaEvidence(compiled=uses_xla, hlo_modules=int(uses_xla), fusions=3)
        emit(FinishedEvent(summary=RunSummary(mode="inspect", steps_done=1, xla_evidence=evidence)))
        return 0
    commands: list[WorkerCommand] = []
    ready = threading.Condition()

    def read() -> None:
        for line in sys.stdin:
            command = WorkerCommand.from_json(line)
            with log.open("a", encoding="utf-8") as fh:
                fh.write(f"{time.time():.6f} {command.to_json()}\n")
            if command.cmd == "cancel" and fake.get("ignore_cancel"):
                continue  # busy in something that never checks (a long XLA compile)
            if command.cmd == "cancel":
                cancel.set()
            with ready:
                commands.append(command)
                ready.notify()
        os._exit(3)

    threading.Thread(target=read, daemon=True).start()
    steps_done = 0
    while True:
        with ready:
            while not commands:
                ready.wait()
            command = commands.pop(0)
        if command.cmd == "cancel":
            emit(CancelledEvent(reason=f"stopped after {steps_done} steps"))
            return 0
        if command.cmd == "warmup" and fake.get("warmup_dies") == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does
        if command.cmd == "warmup" and fake.get("warmup_dies") == "memoryerror":
            raise MemoryError("the fake worker's allocation failed")
        if command.cmd == "warmup":
            time.sleep(float(fake.get("warmup_sleep", 0.0)))
            compile_seconds = float(fake.get("compile", 1.0)) if uses_xla else 0.0
            emit(
                WarmupEvent(
                    first_step_seconds=step * 50 + compile_seconds, warm_step_seconds=[step] * 3
                )
            )
        elif command.cmd == "block":
            seq = command.seq
            if is_arm and fake.get("die_at") == seq:
                print("boom: the fake worker dies", file=sys.stderr)
                sys.stderr.flush()
                os._exit(1)
            if is_arm and fake.get("hang_at") == seq:
                time.sleep(30)  # ignores cancel: the parent must terminate it
            if fake.get("slow_at") == seq:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and not cancel.is_set():
                    time.sleep(0.01)
                if cancel.is_set():
                    emit(CancelledEvent(reason="stopped in a block"))
                    return 0
            seconds = step * command.steps * (1 + drift * seq)
            if is_arm:
                seconds *= 1 + float(fake.get("jitter", 0.0)) * (1 if seq % 2 else -1)
            spread = float((fake.get("jitters") or {}).get(variant, 0.0))
            seconds *= random.Random(f"{variant}-{seq}").uniform(1 - spread, 1 + spread)
            time.sleep(seconds * sleep_share)
            with (log.parent / "blocks.log").open("a", encoding="utf-8") as fh:
                fh.write(f"{time.time():.6f} {seq}\n")
            steps_done += command.steps
            emit(
                BlockEvent(
                    seq=seq,
                    steps=command.steps,
                    seconds=seconds,
                    loss=None if loss != loss else loss,
                    interference=_interference(fake, spec, seconds),
                )
            )
        elif command.cmd == "finish":
            steps_done += command.steps  # an arm catching up, untimed
            evidence = XlaEvidence(compiled=uses_xla, hlo_modules=int(uses_xla), fusions=0)
            accuracy = float((fake.get("accuracy") or {}).get(variant, 0.75))
            emit(
                FinishedEvent(
                    summary=RunSummary(
                        mode="measure",
                        steps_done=steps_done,
                        xla_evidence=evidence,
                        nonfinite_losses=0,
                        final_val_accuracy=accuracy,
                        final_val_loss=0.3,
                    )
                )
            )
            return 0


if __name__ == "__main__":
    sys.exit(main())

"""The machine-limits cache: keyed by machine, device and TensorFlow version, written
atomically; and (with real TensorFlow) the probe itself at tiny sizes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from xlagui.core.machine import peak
from xlagui.core.protocol.events import LimitsEvent
from xlagui.core.protocol.probes import LayerCeiling


def fake_probe(calls: list[tuple[Any, ...]], rate: float = 50e9) -> Any:
    def probe(device: str, image_size: int, batch_size: int, *, peak: bool) -> LimitsEvent:
        calls.append((device, image_size, batch_size, peak))
        out = LimitsEvent(
            device_name="Test CPU",
            ceiling=LayerCeiling(["conv2d_1", "conv2d"], image_size, batch_size, 1e9, 0.05,
                                 2e10),
        )
        if peak:
            out.matmul_size, out.matmul_flops_per_second = 2048, rate
            out.bandwidth_bytes, out.bandwidth_bytes_per_second = 1 << 20, 1e10
            out.probe_seconds = 3.0
        return out
    return probe


@pytest.fixture
def probing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(peak.PROBE_ENV, raising=False)


def test_measured_once_then_read_from_the_cache(tmp_path: Path, probing: None) -> None:
    path = tmp_path / "limits.json"
    calls: list[tuple[Any, ...]] = []
    first = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls))
    assert first is not None and first.matmul_flops_per_second == 50e9
    assert first.ceiling(48, 8) is not None and first.ceiling(48, 8).flops_per_second == 2e10
    again = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls, rate=1.0))
    assert again == first
    assert calls == [("cpu", 48, 8, True)]
    # Another image size needs only the layer ceiling: the peak is kept.
    other = peak.ensure("cpu", 64, 8, path=path, probe=fake_probe(calls, rate=1.0))
    assert calls[-1] == ("cpu", 64, 8, False)
    assert other is not None and other.matmul_flops_per_second == 50e9
    assert set(other.ceilings) == {"48px-b8", "64px-b8"}


def test_a_new_machine_or_tensorflow_measures_again(tmp_path: Path, probing: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "limits.json"
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(peak, "tf_version", lambda: "2.21.0")
    peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls, rate=1e9))
    monkeypatch.setattr(peak, "tf_version", lambda: "2.22.0")
    newer = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls, rate=2e9))
    assert newer is not None and newer.matmul_flops_per_second == 2e9
    assert newer.tf_version == "2.22.0"
    monkeypatch.setattr(peak, "machine_id", lambda: "another host · other CPU · 8 CPUs")
    moved = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls, rate=3e9))
    assert moved is not None and moved.matmul_flops_per_second == 3e9
    assert [c[3] for c in calls] == [True, True, True]
    # Every entry is kept: going back to the first TensorFlow finds its figures.
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert len(entries) == 3
    assert any("TensorFlow 2.21.0" in key for key in entries)
    # Another device is another entry.
    assert peak.cache_key("gpu:0") != peak.cache_key("cpu")


def test_the_cache_is_written_atomically(tmp_path: Path, probing: None,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "limits.json"
    calls: list[tuple[Any, ...]] = []
    peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls))
    before = path.read_text(encoding="utf-8")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        peak.ensure("cpu", 96, 8, path=path, probe=fake_probe(calls))
    assert path.read_text(encoding="utf-8") == before  # untouched, still whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["limits.json"]  # no temporary left


def test_a_damaged_cache_is_measured_again(tmp_path: Path, probing: None) -> None:
    path = tmp_path / "limits.json"
    path.write_text("{not json", encoding="utf-8")
    calls: list[tuple[Any, ...]] = []
    assert peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls)) is not None
    assert calls and json.loads(path.read_text(encoding="utf-8"))["entries"]


def test_probe_off_never_measures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(peak.PROBE_ENV, "off")
    calls: list[tuple[Any, ...]] = []
    assert peak.ensure("cpu", 48, 8, path=tmp_path / "l.json", probe=fake_probe(calls)) is None
    assert calls == []


def test_tf_version_is_read_without_loading_tensorflow() -> None:
    import subprocess
    import sys

    code = ("import sys; from xlagui.core.machine import peak; v = peak.tf_version(); "
            "print(v, 'tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out[0][0].isdigit() and out[1] == "False"


def test_a_peak_per_compute_dtype_is_read_back(tmp_path: Path, probing: None) -> None:
    calls: list[tuple[Any, ...]] = []
    probe = fake_probe(calls)

    def with_dtypes(*args: Any, **kwargs: Any) -> LimitsEvent:
        out: LimitsEvent = probe(*args, **kwargs)
        out.matmul_peaks = {"float32": 50e9, "bfloat16": 300e9, "float16": 49e9}
        return out

    limits = peak.ensure("cpu", 48, 8, path=tmp_path / "limits.json", probe=with_dtypes)
    assert limits is not None
    assert limits.peak("bfloat16") == 300e9 and limits.peak("float16") == 49e9
    again = peak.load(limits.key, tmp_path / "limits.json")
    assert again is not None and again.peak("bfloat16") == 300e9
    # A cache written before the dtypes were probed: float32's peak, no other.
    old = peak.MachineLimits.from_dict({**limits.to_dict(), "matmul_peaks": {}})
    assert old.peak("float32") == 50e9 and old.peak("bfloat16") is None
    legacy = limits.to_dict()
    del legacy["matmul_peaks"]
    assert peak.MachineLimits.from_dict(legacy).peak("bfloat16") is None


def test_another_machine_has_its_own_entry(tmp_path: Path, probing: None) -> None:
    """A host's limits are cached under the host's name (its preflight's), never this
    computer's: each machine is probed once, on itself."""
    path = tmp_path / "limits.json"
    calls: list[tuple[Any, ...]] = []
    here = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls, rate=1e9))
    there = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls, rate=9e9),
                        machine="gpu-box · Xeon · 64 CPUs", tf="2.21.0")
    assert here is not None and there is not None and len(calls) == 2
    assert there.machine == "gpu-box · Xeon · 64 CPUs" and there.tf_version == "2.21.0"
    assert there.key.startswith("gpu-box · Xeon · 64 CPUs | cpu | TensorFlow 2.21.0")
    again = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls),
                        machine="gpu-box · Xeon · 64 CPUs", tf="2.21.0")
    assert again == there and len(calls) == 2


def test_a_probe_not_kept_is_used_once_and_never_cached(tmp_path: Path, probing: None) -> None:
    """A probe beside another program (`keep=False`: the preflight found the machine busy)
    gives this comparison its limits, and the next comparison measures again."""
    path = tmp_path / "limits.json"
    calls: list[tuple[Any, ...]] = []
    busy = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls, rate=20e9), keep=False)
    assert busy is not None and busy.matmul_flops_per_second == 20e9
    assert not path.exists()
    quiet = peak.ensure("cpu", 48, 8, path=path, probe=fake_probe(calls))
    assert quiet is not None and quiet.matmul_flops_per_second == 50e9
    assert len(calls) == 2 and path.is_file()

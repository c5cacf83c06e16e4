"""The CPU's facts, read from `/proc/cpuinfo`."""

from __future__ import annotations

from pathlib import Path

from xlagui.core.machine.cpu import cpu_flags, cpu_model, cpu_name


def test_cpu_flags_come_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx512_bf16 amx_bf16\n\n", encoding="utf-8")
    assert cpu_flags(info) == {"fpu", "avx512_bf16", "amx_bf16"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


def test_the_cpu_model_comes_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\n",
                    encoding="utf-8")
    assert cpu_model(info) == "Intel(R) Xeon(R) Platinum 8480C"
    assert cpu_model(tmp_path / "missing") == ""
    assert cpu_name()  # something, wherever /proc/cpuinfo says nothing

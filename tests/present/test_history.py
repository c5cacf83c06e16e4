"""History's rows in words: the arms named, the machine by its CPU, what was run, the verdict
in brief (issue 31)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.reports import comparison_report
from xlagui.core.results import history
from xlagui.core.results.history import HistoryItem
from xlagui.present import history as words

XEON = "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz"


def saved(tmp_path: Path, name: str, *, arms: tuple[str, ...] = (), training: bool = False,
          **environment: object) -> HistoryItem:
    report = comparison_report(arms=arms, training=training)
    report.environment.update(environment)
    history.save(report, tmp_path / name)
    return next(i for i in history.list_items(tmp_path) if i.folder.name == name)


def test_the_machine_is_named_by_its_cpu_and_cores_not_its_host_name(tmp_path: Path) -> None:
    item = saved(tmp_path, "a", hostname="vm", cpu=XEON, cpu_count=16)
    assert words.machine(item) == "Intel Xeon Platinum 8480+, 16 cores"
    assert "vm" not in words.machine(item)
    tip = words.machine_tip(item)
    assert f"CPU: {XEON}, 16 logical CPUs" in tip and "Computer's name: vm" in tip
    # Before the CPU was recorded: the device's name when it trained on the CPU...
    old = saved(tmp_path, "b", hostname="vm", cpu_count=1, device_kind="CPU",
                device_name="AMD EPYC 7B13 64-Core Processor")
    assert words.machine(old) == "AMD EPYC 7B13, 1 core"
    # ...and the computer's name only where nothing says what it is.
    bare = saved(tmp_path, "c", hostname="vm", cpu_count=4, device_kind="GPU", device_name="H200")
    assert words.machine(bare) == "vm (4 cores)"


def test_a_speed_only_comparison_says_so_and_its_pairs_not_runs_0(tmp_path: Path) -> None:
    quick = saved(tmp_path, "quick")
    assert quick.quick and quick.runs_finished == 0
    assert words.runs(quick) == "speed only, 8 pairs"
    assert words.runs_tip(quick) == (
        "A speed-only comparison: 8 interleaved pairs of timed blocks, no training runs.")
    quick.pairs = 1
    assert words.runs(quick) == "speed only, 1 pair"
    trained = saved(tmp_path, "trained", training=True)
    assert words.runs(trained) == "2"


def test_the_title_names_every_arm(tmp_path: Path) -> None:
    item = saved(tmp_path, "arms", arms=("bf16", "jit+bf16"))
    assert item.other_arms == ("bf16", "jit+bf16")
    assert words.row(item)[1] == "XLA, bf16 and jit+bf16 vs baseline on tiny"


def test_the_verdict_in_brief_says_each_arm_and_the_tip_all_of_it(tmp_path: Path) -> None:
    item = saved(tmp_path, "arms", arms=("bf16",))
    brief = words.verdict(item)
    assert brief == "XLA 2.00× faster ★; bf16 1.25× faster"
    tip = words.verdict_tip(item)
    assert tip.startswith("XLA was 2.00× faster per training step")
    assert "On this machine, the fastest" in tip
    plain = saved(tmp_path, "plain")
    assert words.verdict(plain) == "XLA 2.00× faster"
    plain.saved_verdict, plain.comparison = "XLA was 2.00× faster. Total wall time: less.", None
    assert words.verdict(plain) == "XLA was 2.00× faster"


def test_cpu_words_leave_out_what_tells_no_machine_apart() -> None:
    assert words.cpu_words(XEON) == "Intel Xeon Platinum 8480+"
    assert words.cpu_words("Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz") == "Intel Core i7-8650U"
    assert words.cpu_words("Apple M2") == "Apple M2"

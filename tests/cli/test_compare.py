"""`xlagui compare`, as a user in a terminal or a CI job would run it. Without the `tf` mark
the workers are fakes that speak the protocol: the measuring worker of
tests/helpers/fake_measure_worker.py and the replayed training runs of tests/helpers/streams.py,
put where the workflow starts its workers (`xlagui.core.compare.phases`)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.cli import RealComparison, assert_ran, cli
from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.images import tree_snapshot
from xlagui.cli import main
from xlagui.cli.compare import compare_config
from xlagui.cli.parser import build_parser
from xlagui.core.compare import ComparisonRequest, phases
from xlagui.core.protocol.spec import RunSpec

FAKE_MEASURE = Path(__file__).resolve().parents[1] / "helpers" / "fake_measure_worker.py"


def fake_measure_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json")]


def measure_with_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The speed measurement's workers and the inspection compile's are fake ones: the
    command's request names their command line, as the window's does."""
    from xlagui.cli import compare as command

    monkeypatch.setattr(command, "ComparisonRequest", functools.partial(
        ComparisonRequest, worker_command=fake_measure_command))


def test_a_savedmodel_folder_is_refused_in_words_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SavedModel folder given as --model is a model the registry recognises (its
    `saved_model.pb`) and refuses with why and what to give instead; nothing is measured. (A
    real one: tests/core/model/test_files.py.)"""
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    exported = tmp_path / "exported"
    (exported / "variables").mkdir(parents=True)
    (exported / "saved_model.pb").write_bytes(b"a graph")
    out = tmp_path / "o"
    assert main(["compare", str(data), "--out", str(out), "--model", str(exported)]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert f"{exported} is a TensorFlow SavedModel folder, which xlagui cannot train" in err
    assert "model.save(\"model.keras\")" in err and not out.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--epochs", "0"], "epochs must be between 1 and 1000"),
        (["--image-size", "20"], "smallest image it accepts is 36x36"),
        (["--batch", "500"], "larger than the training set"),
        (["--device", "tpu"], "device must be cpu, gpu, gpu:N or all"),
        (["--arms", "jit,int8"], "unknown arm part 'int8'"),
        (["--arms", "bf16+fp16"], "names two precisions"),
        (["--model", "alexnet"], "--model must be one of cnn, mobilenetv2, resnet50"),
        (["--model", "gone.keras"], "model file gone.keras does not exist"),
        (["--model", "gone.h5"], "model file gone.h5 does not exist"),
        (["--model", "w.weights.h5"], "a .keras, .py, .h5 or .hdf5 file, got 'w.weights.h5'"),
        (["--model", "vit", "--new-head"], "--new-head replaces the last layer of a saved"),
        (["--model", "vit", "--image-size", "30"], "too small for vit: the smallest image it"),
    ],
)
def test_compare_refuses_bad_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    assert main(["compare", str(data), "--out", str(tmp_path / "o"), *args]) == 2
    assert needle in capsys.readouterr().err.replace("\n", " ")


@pytest.mark.parametrize(
    ("args", "budget"),
    [
        ([], 120),  # the XLA side alone
        (["--arms", "jit"], 120),  # the XLA side again: nothing added
        (["--arms", "jit,bf16"], 180),
        (["--arms", "bf16,jit+bf16"], 240),
        (["--xla", "autocluster", "--arms", "autocluster,bf16,jit+bf16"], 240),
        (["--arms", "bf16", "--budget", "60"], 60),  # what the user asks for wins
    ],
)
def test_the_default_budget_grows_with_the_arms(args: list[str], budget: int) -> None:
    parsed = build_parser().parse_args(["compare", "--demo", *args])
    assert compare_config(parsed).budget_seconds == budget


def test_output_inside_the_dataset_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    assert main(["compare", str(data), "--batch", "4", "--out", str(data / "out")]) == 2
    assert "must not be inside the dataset" in capsys.readouterr().err


@pytest.mark.tf
def test_compare_end_to_end(shared_comparison: RealComparison) -> None:
    res, out = shared_comparison.result, shared_comparison.out
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Speed per training step" in res.stdout and "Speed per steady epoch" in res.stdout
    assert "Break-even" in res.stdout
    report = json.loads((out / "comparison.json").read_text())
    runs = {r["variant"]: r for r in report["runs"]}
    finished = {v: next(e for e in r["events"] if e["type"] == "finished") for v, r in runs.items()}
    assert finished["xla"]["summary"]["xla_evidence"]["compiled"] is True
    assert finished["baseline"]["summary"]["xla_evidence"]["compiled"] is False
    started = next(e for e in runs["xla"]["events"] if e["type"] == "started")
    assert started["xla_in_effect"] is True
    assert report["comparison"]["valid"] is True
    rows = (out / "comparison.csv").read_text().splitlines()
    assert (
        rows[0].startswith("row,run_id,variant") and sum(r.startswith("epoch,") for r in rows) == 4
    )
    # nothing written into the dataset
    assert tree_snapshot(shared_comparison.data) == shared_comparison.data_before
    # Outside the output folder, xlagui wrote only into its own cache folder (Keras' config
    # included) and its History (the comparison's JSON, which the next one of these settings
    # is checked against): nothing else in the home folder, nothing left in the temporary one.
    home = shared_comparison.home
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    kept = [w for w in written if w.startswith(".local/share/xlagui/history/")]
    assert all(w.startswith(".cache/xlagui/") for w in written if w not in kept), written
    assert len(kept) == 1 and kept[0].endswith("/comparison.json"), written
    assert json.loads((home / kept[0]).read_text())["created"] == report["created"]
    assert list(shared_comparison.tmp.iterdir()) == []


@pytest.mark.tf
def test_a_real_comparison_writes_event_files_tensorboard_reads(
    shared_comparison: RealComparison,
) -> None:
    """Each training run's TensorBoard scalars, as TensorBoard itself reads them, equal its
    epochs' figures; What XLA did comes from the inspection compile, never the timed runs.
    (Here, beside the test above, so the one real comparison they read is made once.)"""
    # A runtime dependency (pyproject.toml): a missing TensorBoard is a failure, not a skip.
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.util.tensor_util import make_ndarray

    from xlagui.core.protocol.events import EpochEvent
    from xlagui.core.results.dumps import xla_runs
    from xlagui.core.results.export import read_json
    from xlagui.core.worker import tensorboard as tboard

    out = shared_comparison.out
    assert_ran(shared_comparison.result.returncode, out, shared_comparison.result.stderr)
    report = read_json(out / "comparison.json")
    run_ids = [r.run_id for r in report.runs]
    assert run_ids == ["01-baseline-r1", "02-xla-r1"]
    epochs = {r.run_id: [e for e in r.events if isinstance(e, EpochEvent)] for r in report.runs}
    for run_id in run_ids:
        acc = event_accumulator.EventAccumulator(str(out / "tensorboard" / run_id))
        acc.Reload()
        # tf.summary (TF 2) writes scalars as tensors that the scalars plugin shows.
        assert set(acc.Tags()["tensors"]) == set(tboard.SCALAR_TAGS)
        assert acc.SummaryMetadata("epoch/loss").plugin_data.plugin_name == "scalars"
        loss = acc.Tensors("epoch/loss")
        assert [e.step for e in loss] == [1, 2]
        assert [float(make_ndarray(e.tensor_proto)) for e in loss] == pytest.approx(
            [e.loss for e in epochs[run_id]], rel=1e-6
        )
    text = event_accumulator.EventAccumulator(str(out / "tensorboard" / "comparison"))
    text.Reload()
    assert "summary" in "".join(text.Tags()["tensors"])
    # What XLA did: read from the short inspection compile's dump (after the timed work), with
    # its logged compile times; the timed XLA runs dumped nothing.
    ((run_id, did),) = xla_runs(report)
    assert run_id == "i-xla" and did.modules and did.fusions > 0
    assert not (out / "runs" / "02-xla-r1" / "xla").exists()
    assert all(m.compile_seconds is not None for m in did.modules)
    assert all(m.instructions_before is not None for m in did.modules)
    # The measuring XLA worker dumped nothing but still shows that XLA compiled.
    m2 = report.measure_runs[1].summary
    assert m2 is not None and m2.xla_evidence is not None
    assert m2.xla_evidence.compiled and m2.xla_evidence.hlo_modules == 0
    assert not (out / "runs" / "m2-xla" / "xla").exists()


@pytest.mark.tf
def test_events_mode_streams_json_lines(tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    res = cli(
        "compare",
        str(data),
        "--epochs",
        "1",
        "--batch",
        "8",
        "--image-size",
        "48",
        "--only",
        "baseline",
        "--no-explain",
        "--events",
        "--out",
        str(tmp_path / "o"),
    )
    assert res.returncode == 0, res.stderr
    types = [json.loads(line)["type"] for line in res.stdout.splitlines() if line.startswith("{")]
    assert types[0] == "started" and types[-1] == "finished" and "epoch" in types


def test_compare_leaves_out_problem_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.corpus import CASES_BY_NAME
    from tests.helpers.streams import FakeWorker, run_events

    data = CASES_BY_NAME["same_image_two_classes"].build(tmp_path / "case")
    before = tree_snapshot(data)
    fake = FakeWorker(
        {
            "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0)),
            "xla": run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5)),
        }
    )
    monkeypatch.setattr(phases, "run_worker", fake)
    measure_with_fakes(monkeypatch)
    out = tmp_path / "out"
    args = [
        "compare",
        str(data),
        "--epochs",
        "3",
        "--batch",
        "2",
        "--image-size",
        "48",
        "--out",
        str(out),
        "--events",
    ]
    assert main([*args, "--exclude-problems", "conflict,imbalance"]) == 2
    assert "unknown problem kind 'imbalance'" in capsys.readouterr().err
    assert main([*args, "--exclude-problems", "conflict"]) == 0
    assert "2 files left out of this comparison (1 problem)" in capsys.readouterr().err
    used = {Path(s.path).name for spec in fake.specs for s in spec.train + spec.val}
    assert used and not used & {"who.jpg", "cats_0001.jpg"}
    report = json.loads((out / "comparison.json").read_text())
    assert [f["path"] for f in report["dataset"]["excluded"]["files"]] == [
        "train/cats/cats_0001.jpg",
        "train/dogs/who.jpg",
    ]
    assert report["reproduce"].endswith("--exclude-problems conflict")
    assert tree_snapshot(data) == before


def test_a_full_comparison_says_how_long_its_training_runs_will_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before its training runs start, a full comparison says how long they should take: each
    run's epochs × full batches × its side's steady step, as the speed measurement just
    measured them (the figures comparison.json keeps)."""
    from tests.helpers.streams import FakeWorker, run_events
    from xlagui.present.units import duration

    monkeypatch.setenv("COLUMNS", "200")
    fake = FakeWorker({
        "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0)),
        "xla": run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5)),
    })
    monkeypatch.setattr(phases, "run_worker", fake)

    def slow_steps(spec: RunSpec) -> list[str]:  # a baseline step of 0.5 s, XLA's 0.25 s
        return [*fake_measure_command(spec), json.dumps({"step": 0.5})]

    from xlagui.cli import compare as command

    monkeypatch.setattr(command, "ComparisonRequest", functools.partial(
        ComparisonRequest, worker_command=slow_steps))
    data = tiny_split_dataset(tmp_path / "d", train=4, test=2)  # 8 images: 4 batches of 2
    out = tmp_path / "out"
    assert main(["compare", str(data), "--epochs", "3", "--batch", "2", "--image-size", "48",
                 "--budget", "20", "--out", str(out)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    measured = json.loads((out / "comparison.json").read_text())["comparison"]["interleaved"]
    steps = [measured["baseline"]["steady_step_seconds"], measured["xla"]["steady_step_seconds"]]
    assert steps == pytest.approx([0.5, 0.25], rel=0.05)
    expected = duration(3 * 4 * sum(steps))
    said = (f"The 2 training runs (3 epochs of 4 steps each) should take about {expected} by the "
            "step times just measured, plus each epoch's evaluation and each run's start and "
            "compiles.")
    assert said in printed
    assert printed.index(said) < printed.index("Comparison (baseline vs XLA)")


def test_ctrl_c_saves_the_run_in_progress_as_interrupted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C during a training run stops it as closing the window does: the run is saved as
    interrupted with its finished epochs, the runs of its side not started as not run."""
    import signal

    from tests.helpers.streams import FakeWorker, run_events
    from xlagui.core.measure.runner import RunResult
    from xlagui.core.protocol.events import EpochEvent, Event
    from xlagui.core.protocol.task import TaskState

    fake = FakeWorker(
        {
            "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0)),
            "xla": run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5)),
        }
    )

    def ctrl_c_after_epoch_2(
        spec: RunSpec, state: TaskState, on_event: Callable[[Event], None], **_where: object
    ) -> RunResult:
        def relay(event: Event) -> None:
            on_event(event)
            if spec.mode == "train" and isinstance(event, EpochEvent) and event.epoch == 2:
                signal.raise_signal(signal.SIGINT)  # as the terminal sends it

        return fake(spec, state, relay)

    monkeypatch.setattr(phases, "run_worker", ctrl_c_after_epoch_2)
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "out"
    previous = signal.getsignal(signal.SIGINT)
    args = ["compare", str(data), "--epochs", "3", "--batch", "4", "--image-size", "48",
            "--only", "baseline", "--repeats", "2", "--out", str(out)]
    assert main(args) == 130
    assert signal.getsignal(signal.SIGINT) is previous  # put back once the comparison ended
    assert "stopping…" in capsys.readouterr().out
    report = json.loads((out / "comparison.json").read_text())
    # The other side was not asked for: its runs stay queued, as in any one-side run.
    assert [(r["run_id"], r["status"]) for r in report["runs"]] == [
        ("01-baseline-r1", "interrupted"),
        ("02-xla-r1", "queued"),
        ("03-baseline-r2", "not run"),
        ("04-xla-r2", "queued"),
    ]
    kinds = [e["type"] for e in report["runs"][0]["events"]]
    assert kinds.count("epoch") == 2 and kinds[-1] == "cancelled"


def test_ctrl_c_during_the_speed_measurement_saves_the_training_runs_as_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C in the speed phase ends the comparison as closing the window does: the measuring
    workers are interrupted with the pairs they finished, and every training run, never
    started, is saved as not run (it stayed `queued` when the command returned early)."""
    import signal

    measure_with_fakes(monkeypatch)
    measure = phases.run_measurement
    rounds: list[int] = []

    def ctrl_c_in_round_2(*args: object, on_round: Callable[..., None], **kwargs: object) -> object:
        def round_done(report: object) -> None:
            on_round(report)
            rounds.append(1)
            if len(rounds) == 2:
                signal.raise_signal(signal.SIGINT)  # as the terminal sends it

        return measure(*args, on_round=round_done, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(phases, "run_measurement", ctrl_c_in_round_2)
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "out"
    previous = signal.getsignal(signal.SIGINT)
    args = ["compare", str(data), "--epochs", "3", "--batch", "4", "--image-size", "48",
            "--repeats", "2", "--out", str(out)]
    assert main(args) == 130
    assert signal.getsignal(signal.SIGINT) is previous
    printed = capsys.readouterr().out
    assert "stopping…" in printed and "Runs" in printed  # the summary, with the runs not run
    report = json.loads((out / "comparison.json").read_text())
    assert [(r["run_id"], r["status"]) for r in report["measure_runs"]] == [
        ("m1-baseline", "interrupted"),
        ("m2-xla", "interrupted"),
    ]
    assert [(r["run_id"], r["status"]) for r in report["runs"]] == [
        ("01-baseline-r1", "not run"),
        ("02-xla-r1", "not run"),
        ("03-baseline-r2", "not run"),
        ("04-xla-r2", "not run"),
    ]
    assert all(r["events"] == [] for r in report["runs"])
    assert report["inspect_runs"] == []  # nothing compiled after the stop
    assert report["measurement"]["stopped_by"] == "stopped"
    assert report["comparison"]["interleaved"]["pairs"] >= 2  # the finished pairs are kept
    assert (out / "comparison.md").is_file()


def test_compare_writes_and_prints_the_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--markdown`: the Markdown alone on stdout (the progress and summary on stderr), the
    same text in OUT/comparison.md. The speed is measured by workers that speak the protocol
    without TensorFlow."""
    from xlagui.core.results import export
    from xlagui.present.markdown import report_markdown

    measure_with_fakes(monkeypatch)
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "o"
    args = ["compare", str(data), "--quick", "--batch", "4", "--image-size", "48",
            "--budget", "30", "--arms", "bf16", "--out", str(out)]
    assert main([*args, "--markdown", "--events"]) == 2
    assert "--markdown and --events both print on stdout" in capsys.readouterr().err
    assert main([*args, "--markdown", "--json", "--events"]) == 2
    assert "--markdown, --json and --events all print on stdout" in capsys.readouterr().err
    assert main([*args, "--markdown"]) == 0
    printed = capsys.readouterr()
    written = (out / "comparison.md").read_text(encoding="utf-8")
    assert printed.out == written  # nothing else on stdout
    assert written == report_markdown(export.read_json(out / "comparison.json"))
    assert written.startswith("# XLA and bf16 vs baseline on d — ")
    assert ("| Arm | Speed per step | 95% CI (Bonferroni-adjusted) | Pairs | Status | Accuracy "
            "| Recommended |") in (
        written)
    assert "| jit (XLA) | 2.00× faster |" in written and "| bf16 | 2.50× faster |" in written
    assert "--arms bf16 --quick\n```\n" in written
    assert "Comparison (baseline vs XLA)" in printed.err and "comparison.md" in printed.err
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == [
        "comparison.csv", "comparison.json", "comparison.md"]  # no temporary file left


def test_compare_json_prints_the_comparison_document_as_the_other_commands_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--json`: comparison.json alone on stdout when it ends (one document, as `scan`,
    `inspect`, `hosts` and `sweep` print theirs); the progress and summary on stderr."""
    import json

    measure_with_fakes(monkeypatch)
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "o"
    assert main(["compare", str(data), "--quick", "--batch", "4", "--image-size", "48",
                 "--budget", "30", "--out", str(out), "--json"]) == 0
    printed = capsys.readouterr()
    assert printed.out == (out / "comparison.json").read_text(encoding="utf-8")
    document = json.loads(printed.out)  # one document, not a line per event
    assert document["comparison"]["interleaved"]["pairs"] > 0
    assert "Comparison (baseline vs XLA)" in printed.err


def test_the_model_is_a_compare_setting() -> None:
    parsed = build_parser().parse_args(["compare", "--demo", "--model", "ViT"])
    assert compare_config(parsed).model.name == "vit"
    assert compare_config(build_parser().parse_args(["compare", "--demo"])).model.is_article_cnn


@pytest.mark.tf
def test_a_bad_model_file_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    bad = tmp_path / "bad.py"
    bad.write_text("def build_model(input_shape, num_classes):\n    raise RuntimeError('oops')\n")
    out = tmp_path / "o"
    code = main(["compare", str(data), "--batch", "4", "--image-size", "48", "--model", str(bad),
                 "--out", str(out), "--quick"])
    assert code == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert f"{bad}, line 2: build_model raised RuntimeError: oops" in err
    assert not (out / "runs").exists()  # nothing measured


@pytest.mark.tf
def test_a_saved_keras_model_is_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .keras file measured from the CLI. A legacy .h5 file takes the same way here (the
    source is asked by `sources.source_for_path`); it is measured from the window
    (tests/ui/test_tf_end_to_end.py), checked by a worker on an SSH host
    (tests/core/measure/transports/ssh/test_transport.py), and its loading is tested in
    tests/core/model/test_files.py."""
    suffix = ".keras"
    import keras

    inputs = keras.Input(shape=(None, None, 3))
    x = keras.layers.Conv2D(8, 3, activation="relu")(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x))
    model.compile(optimizer="sgd", loss="binary_crossentropy")
    path = tmp_path / f"tiny{suffix}"
    model.save(path)
    data = tiny_split_dataset(tmp_path / "d")
    out = tmp_path / "o"
    code = main(["compare", str(data), "--quick", "--budget", "10", "--batch", "8",
                 "--image-size", "48", "--model", str(path), "--no-explain", "--out", str(out)])
    text = capsys.readouterr().out
    assert_ran(code, out, text)  # 1: a 10 s measurement may not be valid; it still ran
    assert f"Model: tiny{suffix}" in text and "compiled with SGD + " in text
    assert "(as saved in the file)" in text
    saved = json.loads((out / "comparison.json").read_text())
    assert saved["config"]["model"]["source"] == suffix[1:]
    assert saved["config"]["model"]["params"] == model.count_params()
    assert f"--model {path}" in saved["reproduce"]
    assert saved["comparison"]["interleaved"]["pairs"] >= 1
    assert saved["model_check"]["flops_per_step"] > 0



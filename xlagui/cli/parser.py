"""The `xlagui` command line's parser (`build_parser`): every command, its options, their help.

One help formatter (`HelpFormatter`) for the top parser and every command: an option with a
real default ends its help with " (default: X)"; an option whose default is None or "" but
means something says so in its own help, in the same form. Each command has a description and
an epilog of examples, real command lines a user can paste.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xlagui import __version__
from xlagui.cli.sweep_ray import add_ray_arguments
from xlagui.core.protocol.config import (
    DEFAULTS,
    EXTRA_ARM_BUDGET_SECONDS,
    SETTING,
    SETTINGS,
    ModelChoice,
    XlaMode,
)
from xlagui.core.protocol.identity import Role
from xlagui.core.sweep.plan import LOCAL_HOST
from xlagui.present.levers import arms_words, mode_words
from xlagui.present.models import model_help

__all__ = ["HelpFormatter", "build_parser", "shows_default"]

# Where a default is None (the budget is planned from the arms), said as the options' help says
# every default.
_BUDGET_WORDS = (f"{DEFAULTS['budget_seconds']} s, plus {EXTRA_ARM_BUDGET_SECONDS} s for every "
                 "arm besides the XLA side")


def shows_default(action: argparse.Action) -> bool:
    """Whether `action`'s help is to end with its default: an option that takes a value and has
    a real one (not None, False, an empty string or list, nor SUPPRESS). A flag takes no value."""
    default = action.default
    if action.nargs == 0 or default is None or default is False or default is argparse.SUPPRESS:
        return False
    return not (isinstance(default, (str, list, tuple)) and not default)


def add_settings(c: argparse.ArgumentParser, *names: str, metavar: str | None = None,
                 helps: dict[str, str] | None = None) -> None:
    """The options of the settings `names`, made from the settings table
    (`xlagui.core.protocol.settings.SETTINGS`): each one's flag, kind, default and help
    (`helps`: a command's own words for one), its value under the setting's own name. A
    true-or-false setting is a flag that turns its default around."""
    for name in names:
        one = SETTING[name]
        text = (helps or {}).get(name, one.help)
        if one.kind is bool:
            c.add_argument(one.flag, dest=name, help=text,
                           action="store_false" if one.default else "store_true")
        else:
            c.add_argument(one.flag, dest=name, type=one.kind, default=one.default, help=text,
                           metavar=metavar or one.flag.lstrip("-").upper().replace("-", "_"))


def unplaced_settings(c: argparse.ArgumentParser) -> list[str]:
    """The settings with an option that `c` has no option for yet: a new entry in the table
    becomes an option of `compare` without a line here (those above place the others in
    their groups)."""
    taken = {action.dest for action in c._actions}
    return [one.name for one in SETTINGS if one.flag and one.name not in taken]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples as written; each option's default as " (default: X)" after its
    help, unless the help says its default already."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if shows_default(action) and "(default:" not in text:
            return f"{text} (default: %(default)s)"
        return action.help


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="xlagui",
        description=textwrap.fill("Does XLA make my TensorFlow model train faster, by how much, "
                                  "and at what cost? Run with no command to open the desktop "
                                  "app.", 78),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"xlagui {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    _gui_parser(sub)
    _scan_parser(sub)
    c = _compare_parser(sub)
    _measure_arguments(c)
    _busy_machine_arguments(c)
    _model_and_output_arguments(c)
    add_settings(c, *unplaced_settings(c))
    _inspect_parser(sub)
    _models_parser(sub)
    _hosts_parser(sub)
    _sweep_parser(sub)
    _demo_data_parser(sub)
    return p


def _command(sub: Any, name: str, *, help: str, description: str, examples: Sequence[str]
             ) -> argparse.ArgumentParser:
    """The parser of command `name`: its line in `xlagui -h`, its description, its examples."""
    epilog = "examples:\n" + "\n".join(f"  {example}" for example in examples)
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=textwrap.fill(description, 78), epilog=epilog,
        formatter_class=HelpFormatter)
    return parser


def _gui_parser(sub: Any) -> None:
    g = _command(
        sub, "gui", help="open the desktop app (the default)",
        description="Open the desktop app, with a dataset folder or the demo set loaded if "
        "asked. `xlagui`, `xlagui DIR` and `xlagui --demo` do the same.",
        examples=["xlagui gui --demo", "xlagui gui elephants"])
    g.add_argument("dataset", nargs="?", help="a dataset folder to open (default: none, "
                   "choose one in the window)")
    g.add_argument("--demo", action="store_true", help="open with the demo dataset loaded")


def _scan_parser(sub: Any) -> None:
    s = _command(
        sub, "scan", help="scan a dataset folder and report what is in it",
        description="Look at a dataset folder (one sub-folder per class, or train/ and test/ "
        "ones) before training on it: its layout, classes, image sizes and colour modes, and "
        "the problems a person can act on (unreadable or cut-off files, duplicates, the same "
        "image in several classes or in both training and test data). Reads file headers "
        "only and writes nothing.",
        examples=["xlagui scan elephants", "xlagui scan elephants --json --holdout 10"])
    s.add_argument("dataset", help="the dataset folder")
    s.add_argument("--json", action="store_true", help="print the scan as JSON")
    add_settings(s, "holdout_percent", "seed",
                 helps={"seed": "the seed of the validation hold-out's random split"})


def _compare_parser(sub: Any) -> argparse.ArgumentParser:
    """`xlagui compare`: the dataset and the training settings."""
    # No --tensorboard: every training run writes its TensorBoard scalars to OUT/tensorboard.
    # They are written once per epoch after its time was taken and weigh a few KB, so being on
    # costs no measured figure anything (core/worker/tensorboard.py); a flag would only be
    # forgotten.
    c = _command(
        sub, "compare", help="train with and without XLA and compare, headless",
        description="Measure the training step with and without XLA in two live worker "
        "processes, alternating short blocks until the speed-up's interval is narrow enough, "
        "then train each side and compare speed, compile cost and accuracy. Writes a folder "
        "with the comparison as JSON, CSV and Markdown.",
        examples=["xlagui compare --demo --quick",
                  "xlagui compare elephants --arms jit,bf16 --epochs 3 --image-size 64 --png"])
    c.add_argument("dataset", nargs="?", help="the dataset folder (default: the demo set)")
    c.add_argument("--demo", action="store_true", help="use the built-in demo dataset")
    add_settings(c, "epochs", "batch_size", "image_size", "device")
    c.add_argument(
        SETTING["xla"].flag,
        default=SETTING["xla"].default,
        choices=[m.value for m in XlaMode if m.asks_for_xla],
        help=f"{SETTING['xla'].help}: "
        + "; ".join(f"{m.value}: {mode_words(m).how}" for m in XlaMode if m.asks_for_xla),
    )
    add_settings(c, "repeats", "seed", "holdout_percent", "augment", "drop_remainder")
    c.add_argument("--out", type=Path, help="output folder (default: ./xlagui-<date-time>)")
    c.add_argument("--png", action="store_true", help="also render the PNG report (offscreen Qt)")
    c.add_argument("--only", choices=[Role.BASELINE.value, Role.XLA.value],
                   help="run one side only (default: both)")
    return c


def _inspect_parser(sub: Any) -> None:
    i = _command(
        sub, "inspect",
        help="what XLA did: the compiled modules, fusions by kind, convolutions and dots, "
        "the largest fusions; and why: where each step's time goes, every compile, parity",
        description="What XLA did in a comparison's (or one run's) XLA runs: the compiled "
        "modules, fusions by kind, convolutions and dots, the largest fusions. And why: where "
        "each step's time goes, every compile and recompile, and whether the numbers stay "
        "the same.",
        examples=["xlagui inspect run1", "xlagui inspect run1 --top 5 --json"])
    i.add_argument("folder", type=Path, help="a comparison folder or one run's folder")
    i.add_argument("--top", type=int, default=10, help="largest fusions shown")
    i.add_argument("--json", action="store_true", help="print the figures as JSON")


def _models_parser(sub: Any) -> None:
    m = _command(
        sub, "models",
        help="the built-in models, with their parameter count (builds each once)",
        description="The built-in models `compare --model` takes, each built once to count "
        "its parameters at the image size and class count given, and how to train a model "
        "of your own.",
        examples=["xlagui models", "xlagui models --image-size 64 --classes 10"])
    m.add_argument("--image-size", type=int, default=DEFAULTS["image_size"],
                   help="the side, in pixels, of the images the models are built for")
    m.add_argument("--classes", type=int, default=2, help="class count")


def _hosts_parser(sub: Any) -> None:
    h = _command(
        sub, "hosts",
        help="the preflight of an SSH host: versions, devices, CPU, free disk (compare --host)",
        description="Check an SSH host before a comparison runs there (`compare --host`): its "
        "Python, TensorFlow and xlagui versions, its devices, CPU and free disk.",
        examples=["xlagui hosts gpu-box", "xlagui hosts me@gpu-box --remote-python "
                  "~/venv/bin/python --json"])
    _host_arguments(h, required=True)
    h.add_argument("--json", action="store_true", help="print what was found as JSON")


def _demo_data_parser(sub: Any) -> None:
    d = _command(
        sub, "demo-data", help="write the demo elephant dataset to a folder",
        description="Write the demo elephant dataset (drawn images, two classes, train/ and "
        "test/) to a folder; the same seed gives the same files, byte for byte.",
        examples=["xlagui demo-data elephants", "xlagui demo-data elephants-1 --seed 1"])
    d.add_argument("dest", type=Path, help="the folder to write the dataset to")
    d.add_argument("--seed", type=int, default=DEFAULTS["seed"],
                   help="the seed the images are drawn from")


def _sweep_parser(sub: Any) -> argparse.ArgumentParser:
    """`xlagui sweep`: each comma list an axis of the grid (`xlagui.core.sweep.plan`)."""
    w = _command(
        sub, "sweep", help="comparisons over a grid of settings (batch, image size, model, arms, "
        "host, runtime settings): where XLA's verdict flips; resumable",
        description="Run a comparison for every cell of a grid of settings (each comma list "
        "is an axis) and say where XLA's verdict flips. The folder keeps sweep.json, sweep.csv, "
        "sweep.md and each cell's comparison; the same --out again resumes it.",
        examples=["xlagui sweep --demo --batch 16,128 --arms jit --image-size 64",
                  "xlagui sweep --demo --image-size 64 --set threads=1,2 --budget 600 "
                  "--out sweep1"])
    w.add_argument("dataset", nargs="?", help="the dataset folder (default: the demo set)")
    w.add_argument("--demo", action="store_true", help="use the built-in demo dataset")
    _sweep_axes(w)
    w.add_argument("--budget", type=int, default=None,
                   help="seconds for the whole sweep, each cell's measuring budget planned from "
                   f"it (default: no limit, each cell the budget of its arms: {_BUDGET_WORDS})")
    w.add_argument("--out", type=Path, help="the sweep folder (default: "
                   "./xlagui-sweep-<date-time>); the same folder again resumes it")
    w.add_argument("--png", action="store_true",
                   help="also draw sweep.png: the speed-up plot of one or two swept settings, "
                   "with the sentences (offscreen Qt)")
    w.add_argument("--json", action="store_true",
                   help="print sweep.json on stdout when it ends (progress on stderr)")
    add_settings(w, "device", "seed", "holdout_percent", "target_percent", "augment",
                 helps={"seed": "the seed of every cell's training and validation hold-out",
                        "target_percent": "stop a cell once its 95%% interval is within ± this "
                        "percent"})
    _sweep_hosts(w)
    add_ray_arguments(w)
    return w


def _sweep_axes(w: argparse.ArgumentParser) -> None:
    """The sweep's axes of settings: each a comma list, not swept when not given."""
    for one in SETTINGS:  # the settings a sweep may vary, from the table
        if one.sweep:
            w.add_argument(one.flag, dest=one.name, metavar="V,V", default="",
                           help=f"{one.plural}, comma-separated, e.g. {one.example} "
                           f"(default: {one.default}, not swept)")
    w.add_argument("--model", metavar="MODEL,MODEL", default="",
                   help="models, comma-separated: built-in names or files, e.g. cnn,mixer "
                   f"(default: {ModelChoice().name}, not swept)")
    w.add_argument("--arms", metavar="ARMS", action="append", default=[],
                   help=f"the arms every cell measures, comma-separated: {arms_words()}; give "
                   "--arms more than once to sweep over arm lists "
                   f"(default: {DEFAULTS['xla']}, not swept)")
    w.add_argument("--set", metavar="NAME=V,V", action="append", default=[],
                   help="a runtime setting every worker of a cell takes, swept over its values "
                   "(threads=1,2; onednn=on,off; spe=1,8); more than once for more settings "
                   "(default: none, each worker's own settings)")


def _sweep_hosts(w: argparse.ArgumentParser) -> None:
    """Where the sweep's cells run: here, or on SSH hosts."""
    w.add_argument("--host", metavar="HOST,HOST", default="",
                   help=f"SSH hosts, comma-separated, {LOCAL_HOST} for this computer; each cell "
                   "runs wholly on one, and hosts are never compared with each other "
                   "(default: this computer, not swept)")
    w.add_argument("--remote-python", metavar="PY", default="python3",
                   help="the hosts' Python with TensorFlow and this xlagui")
    _transport_options(w)
    w.add_argument("--remote-data", metavar="PATH", default="",
                   help="with --host or --ray: the dataset folder as it already is on the "
                   "hosts or the cluster's nodes (default: copied into each host's cache, or "
                   "sent through Ray's object store)")


def _measure_arguments(c: argparse.ArgumentParser) -> None:
    """`compare`'s speed measurement: speed only, the A/A check, budget, precision, arms,
    files left out."""
    add_settings(c, "quick", "check", "explain")
    c.add_argument(
        SETTING["budget_seconds"].flag,
        dest="budget_seconds",
        type=int,
        default=None,
        help=f"{SETTING['budget_seconds'].help} (default: {_BUDGET_WORDS})",
    )
    add_settings(c, "target_percent")
    c.add_argument(
        "--arms",
        metavar="ARMS",
        default="",
        help=f"also measure these arms against the baseline, comma-separated: {arms_words()}; "
        "the XLA side (--xla) is always measured (default: none, the XLA side alone)",
    )
    c.add_argument(
        "--exclude-problems",
        metavar="KINDS",
        default="",
        help="leave out the files of these scan problems, comma-separated: conflict (the same "
        "image in several classes: every copy), leakage (in training and test data: the test "
        "copy), duplicate (copies within a class: all but one); the folder is not changed "
        "(default: none, every file is used)",
    )


def _busy_machine_arguments(c: argparse.ArgumentParser) -> None:
    """`compare` on a computer in use (issue 37): what counts as disturbed, and waiting."""
    add_settings(c, "busy_percent", metavar="PERCENT")
    c.add_argument(
        "--wait-quiet",
        type=float,
        default=None,
        metavar="SECONDS",
        help="when the machine is busy before measuring, wait up to this long for it to go "
        "quiet (default: measure at once, and say so)",
    )


def _model_and_output_arguments(c: argparse.ArgumentParser) -> None:
    """`compare`'s model, what it prints, and where its workers run."""
    c.add_argument(
        "--model",
        metavar="MODEL",
        default="cnn",
        help=model_help(),
    )
    c.add_argument(
        "--new-head",
        action="store_true",
        help="a .keras model whose output does not fit the class count: keep its body, "
        "replace its last layer",
    )
    # Two machine outputs, two names: `--json` is one document at the end, as in every other
    # command (`scan`, `inspect`, `hosts`, `sweep`); `--events` is the stream while it runs.
    c.add_argument(
        "--json",
        action="store_true",
        help="print comparison.json on stdout when it ends, as scan, inspect, hosts and sweep "
        "print theirs (the progress and summary go to stderr)",
    )
    c.add_argument(
        "--events",
        action="store_true",
        help="print every event as a JSON line on stdout while it runs, instead of progress bars",
    )
    c.add_argument(
        "--markdown",
        action="store_true",
        help="print the comparison as GitHub-flavoured Markdown tables on stdout when it ends, "
        "to paste into an issue or a pull request (the progress and summary go to stderr); "
        "it is written to OUT/comparison.md either way",
    )
    _host_arguments(c, required=False)
    c.add_argument(
        "--remote-data",
        metavar="PATH",
        default="",
        help="with --host: the dataset folder as it already is on the host (same files, same "
        "relative paths) (default: copied into the host's cache)",
    )


def _transport_options(p: argparse.ArgumentParser) -> None:
    """Every registered transport's own settings as flags (`--ssh-config`), each read into
    `Target.options` (`common.reach`)."""
    from xlagui.core.measure.transports import options

    for option in options():
        p.add_argument(option.flag, metavar=option.metavar, default="", dest=option.name,
                       help=option.help)


def _host_arguments(p: argparse.ArgumentParser, *, required: bool) -> None:
    if required:
        p.add_argument("host", help="user@host, or a Host alias of your ssh configuration")
    else:
        p.add_argument(
            "--host",
            metavar="HOST",
            default="",
            help="run every worker on this SSH host (user@host or a Host alias of your ssh "
            "configuration); both sides are measured there (default: this computer)",
        )
    p.add_argument(
        "--remote-python",
        metavar="PY",
        default="python3",
        help="the host's Python with TensorFlow and this xlagui",
    )
    _transport_options(p)

"""`xlagui CMD -h` (issue 31): every option has help and shows a real default as "(default: X)";
every command has a description and examples; `--json` is one document in every command."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from tests.helpers.cli import cli
from xlagui.cli.parser import build_parser

# A default said by hand in another form: "(default 10)", "(20)", "(3.0)".
OTHER_NOTATION = re.compile(r"\(default[^:]|\(\s*[\d.,\s]+\)")


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def options(command: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in command._actions if not isinstance(a, argparse._HelpAction)]


def real_default(action: argparse.Action) -> bool:
    """A default worth saying: a value an option takes when not given (0 is one)."""
    default = action.default
    if action.nargs == 0 or default is None or default is argparse.SUPPRESS:
        return False
    return not (isinstance(default, (str, list, tuple)) and not default)


def action_texts(command: argparse.ArgumentParser) -> dict[str, str]:
    """Each option's part of the command's formatted help, from its name to the next option's,
    with the line wrapping undone."""
    text = command.format_help()
    shown = [a for a in command._actions if a.help is not argparse.SUPPRESS]
    starts = []
    for action in shown:
        name = action.option_strings[0] if action.option_strings else action.metavar or action.dest
        match = re.search(rf"^ {{2}}{re.escape(str(name))}\b", text, re.MULTILINE)
        assert match, f"{command.prog}: {name} is not in its help"
        starts.append((match.start(), action.dest))
    starts.sort()
    ends = [start for start, _ in starts[1:]] + [text.find("\nexamples:")]
    return {dest: " ".join(text[start:end].split())
            for (start, dest), end in zip(starts, ends, strict=True)}


COMMANDS = commands()


def test_the_commands_are_all_here() -> None:
    assert set(COMMANDS) == {"gui", "scan", "compare", "inspect", "models", "hosts", "sweep",
                             "demo-data"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help(name: str) -> None:
    missing = [a.dest for a in options(COMMANDS[name]) if not (a.help or "").strip()]
    assert missing == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_real_default_is_shown(name: str) -> None:
    command = COMMANDS[name]
    texts = action_texts(command)
    unsaid = [a.dest for a in options(command)
              if real_default(a) and f"(default: {a.default}" not in texts[a.dest]]
    assert unsaid == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_one_notation_for_defaults(name: str) -> None:
    texts = action_texts(COMMANDS[name])
    other = {dest: text for dest, text in texts.items() if OTHER_NOTATION.search(text)}
    assert other == {}
    by_hand = [a.dest for a in options(COMMANDS[name]) if "%(default)" in (a.help or "")]
    assert by_hand == []


def test_the_notation_check_sees_the_old_ones() -> None:
    for old in ("largest fusions shown (default 10)", "held out (20)", "class count (2)"):
        assert OTHER_NOTATION.search(old)
    assert not OTHER_NOTATION.search("batch size (default: 64) (threads=1,2)")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_a_description_and_examples(name: str) -> None:
    command = COMMANDS[name]
    assert len((command.description or "").split()) >= 8
    epilog = command.epilog or ""
    assert epilog.startswith("examples:")
    examples = [line.strip() for line in epilog.splitlines()[1:]]
    assert len(examples) >= 2
    assert all(e.startswith("xlagui ") for e in examples), examples
    assert examples[0] in command.format_help()
    for example in examples:  # each one the command itself, and one its parser takes
        words = shlex.split(example)[1:]
        assert words[0] == name, example
        build_parser().parse_args(words)


def test_json_is_one_document_in_every_command_and_events_the_stream() -> None:
    """`--json` means the same in every command that has it: one document when it ends; the
    stream of events while a comparison runs is `--events`, an option of its own."""
    parser = build_parser()
    for name, action in COMMANDS.items():
        for a in action._actions:
            if "--json" in a.option_strings:
                assert a.option_strings == ["--json"], name
                assert "JSON line" not in (a.help or ""), name
    assert parser.parse_args(["compare", "--json"]).json is True
    assert parser.parse_args(["compare", "--json"]).events is False
    assert parser.parse_args(["compare", "--events"]).events is True
    (events,) = [a for a in COMMANDS["compare"]._actions if "--events" in a.option_strings]
    assert events.option_strings == ["--events"] and "JSON line" in (events.help or "")


def test_compare_help_as_a_user_runs_it() -> None:
    res = cli("compare", "-h", timeout=120)
    assert res.returncode == 0, res.stderr
    text = " ".join(res.stdout.split())
    text = text[text.index(" options: "):]  # not the usage line, which names every option
    for option in ("--epochs EPOCHS", "--batch BATCH", "--image-size IMAGE_SIZE", "--seed SEED",
                   "--model MODEL"):
        part = text[text.index(option):]
        following = re.search(r" --[a-z]", part[len(option):])
        mine = part[: len(option) + following.start()] if following else part
        assert "(default: " in mine, mine

"""docs/ARCHITECTURE.md stays true: every module path, dotted name and function name it puts in
backticks exists in the code (issue 28, "ARCHITECTURE.md true, and kept true").

How a backticked span is read (fenced code blocks are diagrams and are skipped; a span may run
over a line break, which counts as a space):

1. `python -m MODULE …`: MODULE is a module of the repository.
2. `PATH: NAME` (`core/measure/interleave.py: measure_interleaved`,
   `ui/comparison_controller.py: ComparisonController.start`): PATH is a module (rule 4) and
   NAME is defined in it (rule 6), or is a method of a class defined in it.
3. Anything else with a space, a quote, `=`, `<` or a leading `-` is a command, a flag, an
   expression or a placeholder path (`xlagui compare --demo`, `runs/<random>`): not checked.
   A call `Name(…)` or `name()` is checked as its name.
4. A path (it holds a `/`, or ends in `.py`): a file or folder at that path from the repository
   root, or one whose path ends with `/PATH` (`machine/peak.py` is
   `xlagui/core/machine/peak.py`; `scan/` is `xlagui/core/data/scan/`). A path whose last part
   has another extension (`run_dir/worker.log`) names a file the app writes: not checked.
5. A file name with another extension (`comparison.json`, `pyproject.toml`, `.keras`): a file
   the app writes or a format, not checked.
6. A dotted name `a.b.c`. Its head is, in this order: another library's name or a key of a
   saved file (`OUTSIDE`: `tf.summary`, `environment.host`; not checked), the instance name
   the text uses for a class of the package (`INSTANCES`: `report.recompute` is
   `ComparisonReport.recompute`), a module (`xlagui.core.compare`, or the last part of a
   module's name: `compare`, `worker_process`, `events`) or a class of the package
   (`WorkerProcess`). The next part is defined in it: at a
   module's top level (def, class, assignment) or in the class (a method, a field, a
   `self.x = …` in a method, also through its bases in the package). Further parts are
   attributes of some class of the package (their types are not followed). Any other head
   fails: the text names something the code does not have.
7. A bare name (`worker_env`, `WorkerProcess`, `_rounds`, `TF_XLA_FLAGS`, and plain lower-case
   ones: `judge`, `plan`, `started`) must be defined somewhere in the package (as in rule 6),
   or be a parameter, a keyword argument, an imported name or a whole string constant there
   (an event type, a status, an environment variable, a Keras keyword, a function looked up
   by its name), a pytest marker of pyproject.toml (`serial`), an arm part a user types
   (`t4`, `spe8`: the arm parser reads it), or another program's or library's word in
   `OUTSIDE` (`Popen`, `sshd`). So a function renamed in the code fails the check whether its
   name has an `_` or not (the doc once kept `judge` and `sentences` after their renames).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
# Where paths of the text may point: the package and the repository's own folders.
TREES = ("xlagui", "tests", "bench", "docs", "packaging", "resources")
# Instance names the text uses for objects of the package's classes.
INSTANCES = {
    "report": "ComparisonReport",
    "spec": "RunSpec",
    "summary": "RunSummary",
    "comparison": "Comparison",
}
# Names that are not this package's code: other libraries' (as heads of dotted names, or bare),
# and keys of the saved comparison.json.
OUTSIDE = frozenset({"tf", "keras", "np", "os", "subprocess", "model", "environment", "Popen",
                     "sshd", "exhaustive"})
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
DOTTED = re.compile(rf"^{IDENT}(\.{IDENT})*$")


@dataclass
class CodeIndex:
    """What the package defines, read from its sources (nothing is imported)."""

    files: set[str] = field(default_factory=set)  # every file and folder, relative to ROOT
    modules: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    classes: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    bases: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    module_files: dict[str, str] = field(default_factory=dict)  # dotted name → path
    words: set[str] = field(default_factory=set)  # parameters, keywords, string constants

    def module_names(self, head: str) -> list[str]:
        """The modules `head` may name: a full dotted name or a module's last part."""
        return [m for m in self.module_files if m == head or m.rsplit(".", 1)[-1] == head]

    def class_has(self, cls: str, name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in self.classes.get(cls, ()):
            return True
        return any(self.class_has(base, name, seen | {cls})
                   for base in self.bases.get(cls, ()) if base not in seen)

    def defined_anywhere(self, name: str) -> bool:
        return (name in self.classes
                or any(name in names for names in self.modules.values())
                or any(name in names for names in self.classes.values()))


def _module_name(rel: str) -> str:
    parts = rel[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _index_module(index: CodeIndex, rel: str, source: str) -> None:
    name = _module_name(rel)
    index.module_files[name] = rel
    tree = ast.parse(source)
    top = index.modules[name]
    for statement in tree.body:
        top.update(_targets(statement))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            members = index.classes[node.name]
            for item in node.body:
                members.update(_targets(item))
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
                        and isinstance(sub.value, ast.Name) and sub.value.id == "self"):
                    members.add(sub.attr)
            index.bases[node.name].update(
                b.id if isinstance(b, ast.Name) else b.attr
                for b in node.bases if isinstance(b, (ast.Name, ast.Attribute)))
        elif isinstance(node, ast.arg):
            index.words.add(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            index.words.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            index.words.add(node.value)
        elif isinstance(node, ast.Import) or (
                isinstance(node, ast.ImportFrom) and not node.level
                and not (node.module or "").startswith("xlagui")):
            # Another library's names (`Protocol`); the package's own count where defined.
            index.words.update((a.asname or a.name).split(".")[0] for a in node.names)


def _targets(node: ast.stmt) -> set[str]:
    """The names a top-level (or class-level) statement defines."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names = set()
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
    if isinstance(node, (ast.If, ast.Try)):  # definitions under `if TYPE_CHECKING:`, `try:`
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                names |= _targets(child)
    return names


def build_index(sources: Mapping[str, str], files: Iterable[str]) -> CodeIndex:
    """The index of the modules `sources` (path relative to ROOT → text) and of `files`."""
    index = CodeIndex(files=set(files))
    for rel, source in sources.items():
        _index_module(index, rel, source)
    return index


def repository_index() -> CodeIndex:
    files: set[str] = set()
    for tree in TREES:
        for path in (ROOT / tree).rglob("*"):
            if "__pycache__" in path.parts or "cache" in path.relative_to(ROOT).parts[:2]:
                continue
            files.add(path.relative_to(ROOT).as_posix())
    sources = {rel: (ROOT / rel).read_text(encoding="utf-8")
               for rel in sorted(files) if rel.startswith("xlagui/") and rel.endswith(".py")}
    index = build_index(sources, files)
    index.words |= pytest_markers()
    return index


def pytest_markers() -> set[str]:
    """The markers pyproject.toml declares (`markers = ["tf: …", "serial: …"]`)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^markers = \[(.*?)^\]", text, flags=re.S | re.M)
    return set(re.findall(r'"(\w+):', block.group(1))) if block else set()


def _typed_arm(span: str) -> bool:
    """Whether `span` is an arm a user types (`t4`, `spe8`), as the arm parser reads it."""
    from xlagui.core.protocol.arms import parse_arms

    try:
        parse_arms([span])
    except ValueError:
        return False
    return True


def spans(text: str) -> list[str]:
    """The backticked spans of the text outside fenced blocks, whitespace made single spaces."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", text)]


def _path_exists(index: CodeIndex, path: str) -> list[str]:
    path = path.rstrip("/")
    return sorted(f for f in index.files if f == path or f.endswith("/" + path))


def _check_path(index: CodeIndex, path: str) -> str | None:
    return None if _path_exists(index, path) else f"no such file or folder: {path}"


def _check_dotted(index: CodeIndex, name: str) -> str | None:
    parts = name.split(".")
    head = parts[0]
    if head in OUTSIDE:
        return None
    if head in INSTANCES:
        return _check_class(index, name, INSTANCES[head], parts[1:])
    # A module: the longest dotted prefix that names one.
    for cut in range(len(parts), 0, -1):
        modules = index.module_names(".".join(parts[:cut]))
        if modules:
            rest = parts[cut:]
            if not rest or any(rest[0] in index.modules[m] for m in modules):
                return _check_rest(index, name, rest[1:])
            if any(_class_chain(index, m, rest) for m in modules):
                return None
            return f"{'.'.join(parts[:cut])} has no {rest[0]}: {name}"
    if head in index.classes:
        return _check_class(index, name, head, parts[1:])
    return f"names nothing in the code: {name}"


def _check_class(index: CodeIndex, name: str, cls: str, rest: list[str]) -> str | None:
    if not rest or index.class_has(cls, rest[0]):
        return _check_rest(index, name, rest[1:])
    return f"{cls} has no {rest[0]}: {name}"


def _class_chain(index: CodeIndex, module: str, rest: list[str]) -> bool:
    """`Class.member` inside `module` (`history.HistoryItem.saved_verdict`)."""
    return (len(rest) >= 2 and rest[0] in index.modules[module]
            and index.class_has(rest[0], rest[1])
            and _check_rest(index, "", rest[2:]) is None)


def _check_rest(index: CodeIndex, name: str, rest: list[str]) -> str | None:
    for part in rest:
        if not any(part in members for members in index.classes.values()):
            return f"no class of the package has {part}: {name}"
    return None


def _check_in_module(index: CodeIndex, path: str, name: str) -> str | None:
    found = [f for f in _path_exists(index, path) if f.endswith(".py")]
    if not found:
        return f"no such module: {path}"
    head, *rest = name.split(".")
    for rel in found:
        module = _module_name(rel)
        top = index.modules[module]
        if head in top and (not rest or index.class_has(head, rest[0])):
            return None
        # A method named without its class (`ui/comparison_controller.py: export_report`).
        if not rest and any(index.class_has(c, head) for c in top if c in index.classes):
            return None
    return f"{path} has no {name}"


def check_span(index: CodeIndex, span: str) -> str | None:
    """Why `span` is not true of the code, or None (true, or not a name of code)."""
    if m := re.fullmatch(r"python -m ([\w.]+)( .*)?", span):
        module = m.group(1)
        return None if module in index.module_files else f"no such module: {module}"
    if m := re.fullmatch(rf"(\S+\.py): ({IDENT}(?:\.{IDENT})*)", span):
        return _check_in_module(index, m.group(1), m.group(2))
    if m := re.fullmatch(rf"({IDENT}(?:\.{IDENT})*)\(.*\)", span):
        span = m.group(1)
    if span.startswith("-") or re.search(r"[\s'\"=<>()]", span):
        return None
    if "/" in span or span.endswith(".py"):
        last = span.rstrip("/").rsplit("/", 1)[-1]
        if "." in last and not last.endswith(".py"):
            return None
        return _check_path(index, span)
    if "." in span:
        if not DOTTED.match(span):
            return None  # a file name with another extension, or a format (`.keras`)
        if span.rsplit(".", 1)[-1] in {"json", "csv", "md", "toml", "keras", "log", "png"}:
            return None
        return _check_dotted(index, span)
    if not re.fullmatch(IDENT, span):
        return None
    if (span in OUTSIDE or index.defined_anywhere(span) or index.module_names(span)
            or span in index.words or _typed_arm(span)):
        return None
    return f"defined nowhere in the package: {span}"


def problems(index: CodeIndex, text: str) -> list[str]:
    """Each span of `text` the code contradicts, with why (once per span)."""
    out: list[str] = []
    for span in dict.fromkeys(spans(text)):
        why = check_span(index, span)
        if why is not None:
            out.append(f"`{span}`: {why}")
    return out


@pytest.fixture(scope="module")
def index() -> CodeIndex:
    return repository_index()


def test_the_rules_resolve_each_kind_of_name(index: CodeIndex) -> None:
    good = ("`core/measure/interleave.py: measure_interleaved` `phases.run_measurement` "
            "`xlagui.core.compare` `python -m xlagui.core.worker.child --probe` "
            "`WorkerProcess.run_to_end` `report.recompute` `machine/peak.py` `scan/` "
            "`worker_env` `history.HistoryItem.saved_verdict` `tf.summary` "
            "`WorkerCommand(\"cancel\")` `runs/<random>` `comparison.json` `batch` "
            "`ui/runs/comparison_controller.py: ComparisonController.start` `t4` `serial` "
            "`sshd` `judge`")
    assert problems(index, good) == []
    bad = ("`models/check.py` `compare.no_such_phase` `core/measure/interleave.py: nothing` "
           "`NoSuchClass.method` `WorkerProcess.no_such_method` `no_such_function` "
           "`python -m xlagui.core.nowhere` `nowhereness` `t99x`")
    assert len(problems(index, bad)) == 9


def test_renaming_a_named_function_fails_the_check() -> None:
    """The doc names `measure_interleaved` (as a bare name and with its module): renamed in
    the code (its def and every use), each of them is reported."""
    files = {p.relative_to(ROOT).as_posix() for tree in TREES for p in (ROOT / tree).rglob("*")}
    sources = {rel: (ROOT / rel).read_text(encoding="utf-8")
               for rel in sorted(files) if rel.startswith("xlagui/") and rel.endswith(".py")}
    text = DOC.read_text(encoding="utf-8")
    before = problems(build_index(sources, files), text)
    assert "def measure_interleaved(" in sources["xlagui/core/measure/interleave.py"]
    renamed = {rel: re.sub(r"\bmeasure_interleaved\b", "measure_all", source)
               for rel, source in sources.items()}
    new = set(problems(build_index(renamed, files), text)) - set(before)
    assert {p.split("`")[1] for p in new} == {
        "measure_interleaved", "core/measure/interleave.py: measure_interleaved"}


@pytest.mark.parametrize("name", ["judge", "sentences"])
def test_renaming_a_plain_lower_case_function_fails_the_check(name: str) -> None:
    """A bare name without an `_` or a capital is checked too: `judge` and `sentences`
    (renamed once while the doc kept them) are reported when renamed in the code."""
    files = {p.relative_to(ROOT).as_posix() for tree in TREES for p in (ROOT / tree).rglob("*")}
    sources = {rel: (ROOT / rel).read_text(encoding="utf-8")
               for rel in sorted(files) if rel.startswith("xlagui/") and rel.endswith(".py")}
    text = DOC.read_text(encoding="utf-8")
    assert f"`{name}`" in text
    before = problems(build_index(sources, files), text)
    renamed = {rel: re.sub(rf"\b{name}\b", f"{name}_renamed", source)
               for rel, source in sources.items()}
    new = set(problems(build_index(renamed, files), text)) - set(before)
    assert f"`{name}`: defined nowhere in the package: {name}" in new


def test_every_name_in_the_architecture_exists(index: CodeIndex) -> None:
    assert problems(index, DOC.read_text(encoding="utf-8")) == []

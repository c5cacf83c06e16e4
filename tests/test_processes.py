"""One process starter (issue 28): only the transport modules start child processes.

An AST check over every module of `xlagui/`. A module starts a process when it calls
`subprocess.Popen` (through `subprocess.`, an alias of the module, or `Popen` imported from it);
that is the rule of the issue. The second test holds every other way of starting one to the
same rule (`subprocess.run`/`call`/`check_call`/`check_output`, `os.system`, `os.spawn*`,
`os.posix_spawn*`, `os.exec*`, `asyncio.create_subprocess_*`, `QProcess`): the model check,
the peak probe, the TensorBoard text and the device probe are to start through the transport
too. The modules allowed to do either are listed once, in `TRANSPORTS`.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "xlagui"

# The transport modules, as globs relative to the repository root: the only places a child
# process may be started from (the transports' registry, `core/measure/transports/`).
TRANSPORTS = (
    "xlagui/core/measure/transports/*",
    "xlagui/core/measure/transports/**/*",
)
# Modules that run a command of the machine they are on, from inside a child of the app, to read
# a fact of that machine: not a child of the app. Each with its reason.
MACHINE_READERS = {
    # `nvidia-smi` for each GPU's memory, inside the device probe and the host's preflight.
    "xlagui/core/machine/devices.py": frozenset({"subprocess.run"}),
    # The worker asks the installed XLA whether it knows the arm's flags (one TensorFlow import
    # compiling a scalar) before loading TensorFlow itself: inside the worker, on its machine.
    "xlagui/core/worker/flags.py": frozenset({"subprocess.run"}),
}
POPEN = frozenset({"subprocess.Popen"})
EVERY_START = POPEN | {
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen",
    "os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe", "os.spawnv", "os.spawnve",
    "os.spawnvp", "os.spawnvpe", "os.posix_spawn", "os.posix_spawnp", "os.execl", "os.execle",
    "os.execlp", "os.execlpe", "os.execv", "os.execve", "os.execvp", "os.execvpe",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
    "PySide6.QtCore.QProcess",
}


def is_transport(rel: str) -> bool:
    return any(fnmatch.fnmatch(rel, pattern) for pattern in TRANSPORTS)


def _imported_names(tree: ast.AST) -> dict[str, str]:
    """Local name → the dotted name it stands for, from the module's imports (anywhere in it:
    lazy imports count)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr, imported: dict[str, str]) -> str | None:
    """The dotted name a call's function stands for (`sp.Popen` → `subprocess.Popen`)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = imported.get(node.id, node.id)
    return ".".join([head, *reversed(parts)])


def process_starts(source: str, kinds: frozenset[str]) -> list[tuple[int, str]]:
    """(line, dotted name) of each call in `source` that starts a process by one of `kinds`."""
    tree = ast.parse(source)
    imported = _imported_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func, imported)
            if name in kinds:
                found.append((node.lineno, name))
    return sorted(found)


def starts_outside_transports(kinds: frozenset[str]) -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if is_transport(rel):
            continue
        for line, name in process_starts(path.read_text(encoding="utf-8"), kinds):
            out.append(f"{rel}:{line} {name}")
    return out


def test_the_check_sees_every_spelling_of_a_call() -> None:
    source = (
        "import subprocess\n"
        "import subprocess as sp\n"
        "from subprocess import Popen, run\n"
        "def f() -> None:\n"
        "    import os\n"
        "    subprocess.Popen(['x'])\n"
        "    sp.Popen(['x'])\n"
        "    Popen(['x'])\n"
        "    run(['x'])\n"
        "    os.system('x')\n"
        "    p: subprocess.Popen[str] | None = None  # a type, not a call\n"
    )
    assert process_starts(source, POPEN) == [
        (6, "subprocess.Popen"), (7, "subprocess.Popen"), (8, "subprocess.Popen")]
    assert [name for _, name in process_starts(source, frozenset(EVERY_START))] == [
        "subprocess.Popen", "subprocess.Popen", "subprocess.Popen", "subprocess.run",
        "os.system"]


def test_the_transports_are_the_allowed_modules() -> None:
    assert is_transport("xlagui/core/measure/transports/local.py")
    assert is_transport("xlagui/core/measure/transports/ssh/client.py")
    assert not is_transport("xlagui/core/measure/worker_process.py")
    assert not is_transport("xlagui/core/measure/model_check.py")


def test_only_the_transports_call_popen() -> None:
    assert starts_outside_transports(POPEN) == []


def test_only_the_transports_start_any_process() -> None:
    """The rule for every way of starting a process, less a machine reader's own command."""
    allowed = {f"{rel}:" for rel in MACHINE_READERS}
    found = starts_outside_transports(frozenset(EVERY_START))
    assert [f for f in found
            if not any(f.startswith(a) and f.split()[-1] in MACHINE_READERS[a[:-1]]
                       for a in allowed)] == []

"""PyInstaller: find the package `xlagui.resources` in the top-level `resources/` folder.

pyproject.toml maps that folder to the package (`[tool.setuptools.package-dir]`). An installed
wheel has it at xlagui/resources/, but in a checkout (editable install) it exists only through
setuptools' import finder, which PyInstaller's analysis does not consult: without this hook the
bundle lacks the module, and importlib.resources.files("xlagui.resources") fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def pre_find_module_path(api: Any) -> None:
    if (ROOT / "resources" / "__init__.py").is_file():  # a checkout, not an installed wheel
        api.search_dirs = [str(ROOT)]

"""The app's data files: icons, the .desktop entry and the AppStream metainfo.

Installed as the package `xlagui.resources` (pyproject maps the top-level `resources/` folder to
it), so code reads them with `importlib.resources.files("xlagui.resources") / "xlagui.svg"`, the
same from a checkout, an editable install, a wheel or the PyInstaller bundle.
"""

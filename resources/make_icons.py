"""Regenerate the app icon's PNG, ICO and ICNS files from the scalable SVG.

    python resources/make_icons.py

The SVG (`icons/hicolor/scalable/apps/<APP_ID>.svg`) is the source; everything else is made
from it and committed, so neither an install nor a build needs to run this. Run it again after
editing the SVG, then commit the outputs:

- `icons/hicolor/<N>x<N>/apps/<APP_ID>.png` for N in 16, 24, 32, 48, 64, 128, 256, 512
  (the freedesktop icon theme layout: a `.desktop` file's `Icon=<APP_ID>` finds them);
- `xlagui.svg`, a copy of the SVG that the app loads through `importlib.resources`;
- `xlagui.ico` (Windows: 16-256 px) and `xlagui.icns` (macOS: 16-1024 px) for the PyInstaller
  bundle.

Sizes up to 32 px drop the "XLA" letters and draw a larger bolt alone: at that size the letters
are a grey smudge. PySide6's QtSvg renders the SVG (it is in pyside6-essentials, a dependency
already); Pillow writes the ICO and ICNS containers.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from PIL import Image
from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

APP_ID = "io.github.xlagui.XlaGui"  # xlagui.APP_ID; repeated so this runs without the package
HERE = Path(__file__).resolve().parent
HICOLOR = HERE / "icons" / "hicolor"
SOURCE = HICOLOR / "scalable" / "apps" / f"{APP_ID}.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICNS_SIZES = (16, 32, 64, 128, 256, 512, 1024)
SMALL = 32  # at this size and below, the bolt alone
# Edits to the SVG for the small sizes, each expected exactly once: no wordmark; the tile to the
# edges (a 6-unit margin is a blurred half pixel at 16 px); the bolt centred (its box is x 35-93,
# y 12-92 of the 128-unit view box), enlarged, without the outline that greys it at 16 px.
SMALL_EDITS = (
    (r'<g id="wordmark".*?</g>', ""),
    (r'<rect x="6" y="6" width="116" height="116"', '<rect x="1" y="1" width="126" height="126"'),
    (r'<g id="bolt">', '<g id="bolt" transform="translate(64 64) scale(1.25) translate(-64 -52)">'),
    (r' stroke="#b8860b" stroke-width="2"', ""),
)


def small_variant(svg: str) -> str:
    """The SVG as drawn at 32 px and below."""
    for pattern, replacement in SMALL_EDITS:
        svg, n = re.subn(pattern, replacement, svg, flags=re.DOTALL)
        if n != 1:
            raise SystemExit(f"{SOURCE.name}: the small-size edit {pattern!r} matched {n} times")
    return svg


def render(svg: str, size: int) -> Image.Image:
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise SystemExit(f"{SOURCE}: QtSvg cannot read it")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    # Straight (not premultiplied) alpha, byte order R G B A: what Pillow's "RGBA" is.
    rgba = image.convertToFormat(QImage.Format.Format_RGBA8888)
    data = bytes(rgba.constBits())
    return Image.frombuffer("RGBA", (size, size), data, "raw", "RGBA", rgba.bytesPerLine(), 1)


def main() -> int:
    svg = SOURCE.read_text(encoding="utf-8")
    small = small_variant(svg)
    images = {n: render(small if n <= SMALL else svg, n) for n in {*PNG_SIZES, *ICNS_SIZES}}
    for n in PNG_SIZES:
        out = HICOLOR / f"{n}x{n}" / "apps" / f"{APP_ID}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        images[n].save(out, optimize=True)
    shutil.copyfile(SOURCE, HERE / "xlagui.svg")
    # Each size is its own rendering (append_images), not the largest one scaled down.
    ico = [images[n] for n in ICO_SIZES]
    ico[-1].save(HERE / "xlagui.ico", sizes=[(n, n) for n in ICO_SIZES], append_images=ico[:-1])
    icns = [images[n] for n in ICNS_SIZES]
    icns[-1].save(HERE / "xlagui.icns", append_images=icns[:-1])
    print(f"wrote {len(PNG_SIZES)} PNGs, xlagui.svg, xlagui.ico and xlagui.icns under {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

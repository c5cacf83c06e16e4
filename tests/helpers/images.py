"""Craft image files (and broken ones) for tests, with Pillow, so no binary fixtures are needed.

Every image is filled with noise seeded from its path (or `seed`), so two files never share
their bytes by accident: tests about duplicates copy a file on purpose.
"""

from __future__ import annotations

import os
import random
import shutil
import struct
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image

StrPath = str | os.PathLike[str]

# What Pillow calls the format for each extension we write.
_FORMATS = {
    ".jpg": "JPEG",
    ".jpeg": "JPEG",
    ".png": "PNG",
    ".gif": "GIF",
    ".bmp": "BMP",
    ".webp": "WEBP",
    ".tif": "TIFF",
    ".tiff": "TIFF",
}


def noise_image(size: tuple[int, int] = (8, 8), mode: str = "RGB", seed: object = 0) -> Image.Image:
    """An image of random pixels, the same for the same `seed`, in any mode Pillow can build."""
    n_bytes = len(Image.new(mode, size).tobytes())
    data = random.Random(str(seed)).randbytes(n_bytes)
    return Image.frombytes(mode, size, data)


def make_image(
    path: StrPath,
    size: tuple[int, int] = (8, 8),
    mode: str = "RGB",
    *,
    format: str | None = None,
    seed: object = None,
    **save_options: Any,
) -> Path:
    """Write a noise image to `path` (parents created) and return the path.

    `format` defaults to the one the extension names, so `make_image("x.jpg", format="PNG")`
    writes a PNG named `.jpg`. `seed` defaults to the path, making every file's bytes unique.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = format or _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"say which format to write {path.name} in")
    image = noise_image(size, mode, seed=str(path) if seed is None else seed)
    image.save(path, fmt, **save_options)
    return path


def make_jpeg(
    path: StrPath, size: tuple[int, int] = (8, 8), mode: str = "RGB", **options: Any
) -> Path:
    """A JPEG (modes RGB, L or CMYK)."""
    return make_image(path, size, mode, format="JPEG", **options)


def make_png(
    path: StrPath, size: tuple[int, int] = (8, 8), mode: str = "RGB", **options: Any
) -> Path:
    """A PNG in any mode PNG holds: RGB, RGBA, L, LA, P, 1, I;16 (16-bit grayscale)."""
    return make_image(path, size, mode, format="PNG", **options)


def make_animated_gif(path: StrPath, size: tuple[int, int] = (8, 8), frames: int = 3) -> Path:
    """A GIF with `frames` different frames."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images = [noise_image(size, "P", seed=f"{path}:{i}") for i in range(frames)]
    images[0].save(path, "GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return path


def png_bytes(
    width: int,
    height: int,
    *,
    bit_depth: int = 8,
    color_type: int = 2,
    idat: bytes | None = None,
) -> bytes:
    """A PNG written chunk by chunk, so its header can claim any size at almost no cost.

    color_type: 0 grayscale, 2 RGB, 3 palette, 4 grayscale+alpha, 6 RGBA. Without `idat`, the
    pixel data is a few compressed zero bytes: fine for anything that reads only the header
    (a 20000x20000 "decompression bomb" is 60 bytes), not for decoding.
    """

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    body = chunk(b"IHDR", ihdr)
    if color_type == 3:
        body += chunk(b"PLTE", bytes(3))
    body += chunk(b"IDAT", zlib.compress(b"\0" * 16) if idat is None else idat)
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IEND", b"")


def make_png_header(path: StrPath, width: int, height: int, **options: Any) -> Path:
    """Write `png_bytes(width, height, **options)` to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(width, height, **options))
    return path


def make_rgb16_png(path: StrPath, size: tuple[int, int] = (4, 4)) -> Path:
    """A real, decodable 16-bit-per-channel RGB PNG (Pillow cannot write one itself)."""
    width, height = size
    rng = random.Random(str(path))
    raw = b"".join(b"\0" + rng.randbytes(width * 6) for _ in range(height))
    return make_png_header(path, width, height, bit_depth=16, color_type=2, idat=zlib.compress(raw))


def make_file(path: StrPath, data: bytes | str = b"") -> Path:
    """Any file with the given content (text is UTF-8 encoded), parents created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def truncate(path: StrPath, keep: float = 0.5) -> Path:
    """Cut a file down to the first `keep` share of its bytes, as an interrupted copy would."""
    path = Path(path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def copy(source: StrPath, target: StrPath) -> Path:
    """A byte-identical copy (parents created)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def make_class_folders(
    root: StrPath,
    counts: Mapping[str, int],
    *,
    ext: str = ".jpg",
    size: tuple[int, int] = (8, 8),
    mode: str = "RGB",
) -> list[Path]:
    """`root/<class>/<class>_<i><ext>` for each class and count; returns the files written."""
    written = []
    for label, n in counts.items():
        for i in range(n):
            written.append(make_image(Path(root) / label / f"{label}_{i:04d}{ext}", size, mode))
    return written


def make_split_dataset(
    root: StrPath,
    train: Mapping[str, int],
    test: Mapping[str, int],
    *,
    test_folder: str = "test",
    ext: str = ".jpg",
    size: tuple[int, int] = (8, 8),
) -> list[Path]:
    """`root/train/<class>/...` and `root/<test_folder>/<class>/...`; returns the files written."""
    return make_class_folders(Path(root) / "train", train, ext=ext, size=size) + (
        make_class_folders(Path(root) / test_folder, test, ext=ext, size=size)
    )


def tree_snapshot(root: StrPath) -> dict[str, tuple[int, int, int]]:
    """rel path -> (mode, size, mtime_ns) of everything under `root`, links not followed; to
    show that something left a folder untouched."""
    root = Path(root)
    snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            st = full.lstat()
            snapshot[str(full.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns)
    st = root.lstat()
    snapshot["."] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return snapshot

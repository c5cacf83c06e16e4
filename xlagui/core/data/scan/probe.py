"""Reading each candidate's header through Pillow (never its pixels), and checking that the
file is not cut short: what makes a candidate an `ImageFile` or a `Problem`."""

from __future__ import annotations

import os
import stat
import struct
import warnings
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

from xlagui.core.data.scan.context import ScanContext, reason
from xlagui.core.data.scan.model import ImageFile, color_word
from xlagui.core.data.scan.walk import Candidate

DEFAULT_PIXEL_LIMIT = 89_478_485  # Pillow's own default for Image.MAX_IMAGE_PIXELS

# The formats an image extension promises; a mismatch is only worth a note.
EXTENSION_FORMATS: dict[str, frozenset[str]] = {
    ".jpg": frozenset({"JPEG", "MPO"}),
    ".jpeg": frozenset({"JPEG", "MPO"}),
    ".jpe": frozenset({"JPEG", "MPO"}),
    ".jfif": frozenset({"JPEG", "MPO"}),
    ".png": frozenset({"PNG"}),
    ".gif": frozenset({"GIF"}),
    ".bmp": frozenset({"BMP", "DIB"}),
    ".webp": frozenset({"WEBP"}),
    ".tif": frozenset({"TIFF"}),
    ".tiff": frozenset({"TIFF"}),
}
IMAGE_EXTENSIONS = frozenset(EXTENSION_FORMATS)
# The first bytes of the formats we check for truncation: a file that starts like an image but
# whose header cannot be read was cut short, not something else misnamed.
_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a")
_PNG_IEND = b"IEND\xaeB`\x82"
_JPEG_EOI = b"\xff\xd9"
# Some writers pad files to a block size after the end marker; a few bytes of that are fine.
_PADDING = b"\x00 \t\r\n\xff"
_TAIL_BYTES = 64
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows would otherwise translate line ends


def probe_all(
    ctx: ScanContext, candidates: list[Candidate]
) -> tuple[list[ImageFile], dict[str, bytes]]:
    """The usable images among `candidates`, and path -> each one's last bytes: read anyway
    for the truncation check, with the size they tell most different files apart unhashed."""
    files: list[ImageFile] = []
    tails: dict[str, bytes] = {}
    total = max(1, len(candidates))
    for i, cand in enumerate(candidates):
        ctx.check_stop()
        probed = probe(ctx, cand)
        if probed is not None:
            image, tail = probed
            files.append(image)
            tails[image.path] = tail
        ctx.progress(0.9 * (i + 1) / total)
    return files, tails


def probe(ctx: ScanContext, cand: Candidate) -> tuple[ImageFile, bytes] | None:
    """The image and its last bytes, or None after reporting why the file is unusable."""
    path, rel = cand.path, cand.rel
    try:
        # Non-blocking, so that a pipe put in place of a listed file cannot hang the scan;
        # it changes nothing for regular files.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _O_BINARY)
    except FileNotFoundError:
        if os.path.islink(path):
            ctx.problem("unreadable", [path], said="unreadable.broken_link", rel=rel,
                        target=_readlink(path))
        else:
            ctx.problem("vanished", [path], rel=rel)
        return None
    except OSError as exc:
        ctx.problem("unreadable", [path], rel=rel, reason=reason(exc))
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None  # replaced by a folder or a pipe since it was listed
            if st.st_size == 0:
                ctx.problem("not_an_image", [path], said="not_an_image.empty", rel=rel)
                return None
            return _probe_open(ctx, cand, fh, st.st_size)
        except OSError as exc:
            ctx.problem("unreadable", [path], rel=rel, reason=reason(exc))
            return None


def _probe_open(
    ctx: ScanContext, cand: Candidate, fh: BinaryIO, size: int
) -> tuple[ImageFile, bytes] | None:
    path, rel = cand.path, cand.rel
    fh.seek(0)
    header = _pillow_header(ctx, cand, fh)
    if header is None:
        return None
    width, height, fmt, mode, frames, color = header
    if width * height > ctx.pixel_limit:
        ctx.problem("too_large", [path], rel=rel, width=width, height=height,
                    limit=ctx.pixel_limit)
        return None
    fh.seek(max(0, size - _TAIL_BYTES))
    tail = fh.read(_TAIL_BYTES)
    if fmt in ("JPEG", "MPO") and not _jpeg_is_complete(fh, tail):
        ctx.problem("truncated", [path], said="truncated.jpeg", rel=rel)
        return None
    if fmt == "PNG" and not _png_is_complete(fh, size, tail):
        ctx.problem("truncated", [path], said="truncated.png", rel=rel)
        return None
    if cand.ext in EXTENSION_FORMATS and fmt not in EXTENSION_FORMATS[cand.ext]:
        ctx.problem("misnamed", [path], rel=rel, format=fmt, ext=cand.ext)
    if frames > 1:
        ctx.problem("animated", [path], rel=rel, frames=frames)
    image = ImageFile(
        path=path,
        rel=rel,
        split=cand.split,
        label=cand.label,
        width=width,
        height=height,
        format=fmt,
        mode=mode,
        size_bytes=size,
        frames=frames,
        color=color,
    )
    return image, tail


def _pillow_header(
    ctx: ScanContext, cand: Candidate, fh: BinaryIO
) -> tuple[int, int, str, str, int, str] | None:
    """(width, height, format, mode, frames, colour word) as Pillow reads them from the
    header, or None after reporting why the file is unusable."""
    path, rel = cand.path, cand.rel
    try:
        im = open_header(fh)
    except Image.DecompressionBombError as exc:  # a plugin's own check (DCX, ICNS, …)
        ctx.problem("too_large", [path], said="too_large.refused", rel=rel, said_by=str(exc))
        return None
    except Exception as exc:  # any failure to read a header means "unusable"
        fh.seek(0)
        head = fh.read(16)
        if head.startswith(_SIGNATURES):
            ctx.problem("truncated", [path], said="truncated.header", rel=rel)
        elif isinstance(exc, UnidentifiedImageError):
            ctx.problem("not_an_image", [path], rel=rel)
        else:
            ctx.problem("not_an_image", [path], said="not_an_image.unreadable", rel=rel,
                        said_by=str(exc))
        return None
    with im:
        width, height = im.size
        fmt = im.format or "unknown"
        mode = im.mode
        color = color_word(
            mode,
            sixteen_bit=_is_sixteen_bit(im),
            transparency="transparency" in im.info,
        )
        frames = 1
        try:
            # MPO is a JPEG with extra pictures (depth maps, previews), not an animation. An
            # image over the limit is refused whatever its frames: they are not read (Pillow
            # checks each frame's size against its own limit as it seeks).
            if (fmt != "MPO" and width * height <= ctx.pixel_limit
                    and getattr(im, "is_animated", False)):
                frames = int(getattr(im, "n_frames", 1))
        except Exception:  # counting frames reads past the header, which may be cut
            ctx.problem("truncated", [path], said="truncated.frames", rel=rel)
            return None
    return width, height, fmt, mode, frames, color


def _is_sixteen_bit(im: Image.Image) -> bool:
    if im.mode.startswith("I;16"):
        return True
    if im.format not in ("PNG", "TIFF"):
        return False  # BMP's "BGR;16" is 16 bits per pixel, not per channel
    for tile in getattr(im, "tile", None) or []:
        args = tile[3] if len(tile) > 3 else None
        rawmode = args[0] if isinstance(args, tuple) and args else args
        if isinstance(rawmode, str) and ";16" in rawmode:
            return True
    return False


def _jpeg_is_complete(fh: BinaryIO, tail: bytes) -> bool:
    """Whether the JPEG's end-of-image marker is there, read from the last bytes only.

    Phones append data after the marker (motion photos, trailers); only then is the file read
    once, to look for the marker after the start of the main image's compressed data.
    """
    if tail.rstrip(_PADDING).endswith(_JPEG_EOI):
        return True
    fh.seek(0)
    data = fh.read()
    scan_start = _jpeg_scan_start(data)
    return scan_start is not None and data.find(_JPEG_EOI, scan_start) != -1


def _jpeg_scan_start(data: bytes) -> int | None:
    """Offset just after the first start-of-scan segment header, walking the marker segments
    so that an embedded thumbnail's markers (inside APP1) are skipped."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if marker == 0xDA:
            return pos + 2 + length
        pos += 2 + length
    return None


def _png_is_complete(fh: BinaryIO, size: int, tail: bytes) -> bool:
    """Whether the PNG's IEND chunk is there: at the very end, or (when something follows it)
    found by hopping over the chunks by their lengths, which reads 8 bytes per chunk."""
    if tail.rstrip(_PADDING).endswith(_PNG_IEND):
        return True
    pos = 8
    while pos + 8 <= size:
        fh.seek(pos)
        head = fh.read(8)
        if len(head) < 8:
            return False
        length = int.from_bytes(head[:4], "big")
        if head[4:8] == b"IEND":
            return pos + 12 <= size
        pos += 12 + length
    return False


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def open_header(fh: BinaryIO) -> Image.Image:
    """`Image.open(fh)` without its decompression-bomb check: the header is read by the plugin
    that accepts the file, found as `Image.open` finds it, and nothing is decoded.

    The scan names an oversized image's size itself (against `ScanContext.pixel_limit`), so it
    must read headers Pillow would refuse. Pillow's check reads the process-wide
    `Image.MAX_IMAGE_PIXELS`: switching that off for the scan switched it off for every thread,
    the window's thumbnail decoders included. This leaves it alone.
    """
    fh.seek(0)
    prefix = fh.read(16)
    messages: list[str] = []
    tried: set[str] = set()
    for load_plugins in (Image.preinit, Image.init):
        load_plugins()
        for fmt in [f for f in Image.ID if f not in tried]:
            tried.add(fmt)
            factory, accept = Image.OPEN[fmt]
            result = not accept or accept(prefix)
            if isinstance(result, str):
                messages.append(result)
                continue
            if not result:
                continue
            try:
                fh.seek(0)
                return factory(fh, "")
            except (SyntaxError, IndexError, TypeError, struct.error) as exc:
                if Image.WARN_POSSIBLE_FORMATS:
                    messages.append(f"{fmt} opening failed. {exc}")
    for message in messages:  # as Image.open says them
        warnings.warn(message, stacklevel=2)
    raise UnidentifiedImageError(f"cannot identify image file {fh!r}")

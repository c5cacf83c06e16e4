"""Drawing one demo elephant (`core/data/demo.py` writes the set).

The article trains on photos of African and Asian elephants. We cannot ship those, so we draw
elephants with Pillow instead. The two kinds differ only in shape, the way the real animals do:

- African: large, veined, fan-shaped ears covering the shoulder, a saddle (concave) back between
  shoulder and hip humps, a single-domed head.
- Asian: small rounded ears low on the head, one arched (convex) back, a twin-domed head that
  rises above the back line.

Everything else — pose, flip, size, where the animal stands, body colour, ear shade, tusks,
background, blobs, blur, noise — is drawn from the same distribution for both kinds, so a
classifier cannot get by on mean colour or a fixed pixel; it has to learn the shapes. (The
African's ear rim and veins do give it somewhat more dark outline pixels: a consequence of the
shape, not a colour rule.) Generation is deterministic: every image has its own random stream
derived from (seed, split, index), so the same seed gives byte-identical files.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

CLASSES = ("african", "asian")  # a change to the drawing must bump `demo.DEMO_VERSION`

# Drawn at this multiple of the final size, then box-reduced: cheap anti-aliasing, and the
# polygon edges stop looking like a give-away staircase.
_SUPERSAMPLE = 2

Point = tuple[float, float]
RGB = tuple[int, int, int]


# --------------------------------------------------------------------------------------------
# Drawing


def _ellipse(cx: float, cy: float, rx: float, ry: float, n: int = 28) -> list[Point]:
    # Polygons rather than ImageDraw.ellipse, so every part rotates with the animal.
    return [
        (cx + rx * math.cos(2 * math.pi * k / n), cy + ry * math.sin(2 * math.pi * k / n))
        for k in range(n)
    ]


def _shade(colour: RGB, factor: float) -> RGB:
    r, g, b = colour
    return (
        max(0, min(255, round(r * factor))),
        max(0, min(255, round(g * factor))),
        max(0, min(255, round(b * factor))),
    )


def _jitter(rng: random.Random, value: float, spread: float = 0.08) -> float:
    return value * rng.uniform(1 - spread, 1 + spread)


def _body_colour(rng: random.Random) -> RGB:
    # Grey or dusty brown, light or dark; independent of the kind.
    base = rng.uniform(70, 175)
    if rng.random() < 0.5:
        tint = rng.uniform(-6, 6)
        return _shade((round(base + tint), round(base), round(base - tint)), 1.0)
    warm = rng.uniform(8, 30)
    return _shade((round(base + warm), round(base + warm * 0.35), round(base - warm * 0.4)), 1.0)


class _Canvas:
    """An ImageDraw that takes points in the elephant's own frame (body length 1, facing +x,
    y down) and places them with one scale, rotation, flip and offset."""

    def __init__(
        self,
        draw: ImageDraw.ImageDraw,
        scale: float,
        angle: float,
        flip: bool,
        offset: Point,
    ) -> None:
        self.draw = draw
        self.scale = scale
        self._cos = math.cos(angle)
        self._sin = math.sin(angle)
        self._flip = -1.0 if flip else 1.0
        self._offset = offset

    def place(self, points: Sequence[Point]) -> list[Point]:
        ox, oy = self._offset
        out = []
        for x, y in points:
            x *= self._flip
            out.append(
                (
                    ox + self.scale * (x * self._cos - y * self._sin),
                    oy + self.scale * (x * self._sin + y * self._cos),
                )
            )
        return out

    def polygon(
        self,
        points: Sequence[Point],
        fill: RGB,
        outline: RGB | None = None,
        width: float = 0.0,
    ) -> None:
        self.draw.polygon(
            self.place(points),
            fill=(*fill, 255),
            outline=None if outline is None else (*outline, 255),
            width=max(1, round(width * self.scale)),
        )

    def line(self, points: Sequence[Point], fill: RGB, width: float) -> None:
        self.draw.line(
            self.place(points),
            fill=(*fill, 255),
            width=max(1, round(width * self.scale)),
            joint="curve",
        )


def _thick_curve(points: Sequence[Point], widths: Sequence[float]) -> list[Point]:
    """A closed outline around a polyline whose thickness tapers from widths[0] to widths[-1]."""
    left: list[Point] = []
    right: list[Point] = []
    for i, (x, y) in enumerate(points):
        ax, ay = points[max(0, i - 1)]
        bx, by = points[min(len(points) - 1, i + 1)]
        dx, dy = bx - ax, by - ay
        norm = math.hypot(dx, dy) or 1.0
        nx, ny = -dy / norm, dx / norm
        half = widths[i] / 2
        left.append((x + nx * half, y + ny * half))
        right.append((x - nx * half, y - ny * half))
    return left + right[::-1]


def _bezier(p0: Point, p1: Point, p2: Point, n: int = 10) -> list[Point]:
    out = []
    for k in range(n + 1):
        t = k / n
        u = 1 - t
        out.append(
            (
                u * u * p0[0] + 2 * u * t * p1[0] + t * t * p2[0],
                u * u * p0[1] + 2 * u * t * p1[1] + t * t * p2[1],
            )
        )
    return out


def _draw_background(rng: random.Random, img: Image.Image) -> float:
    """Sky over ground with random gradients and blobs. Returns the horizon's y in pixels."""
    w, h = img.size
    sky_top = (rng.randint(60, 170), rng.randint(120, 200), rng.randint(180, 255))
    sky_low = (rng.randint(170, 240), rng.randint(190, 245), rng.randint(200, 255))
    ground_palette = [
        (rng.randint(60, 120), rng.randint(110, 170), rng.randint(40, 90)),  # grass
        (rng.randint(150, 200), rng.randint(140, 180), rng.randint(70, 110)),  # dry savanna
        (rng.randint(110, 150), rng.randint(90, 120), rng.randint(60, 90)),  # earth
    ]
    ground_far = rng.choice(ground_palette)
    ground_near = _shade(rng.choice(ground_palette), rng.uniform(0.7, 1.1))
    horizon = h * rng.uniform(0.3, 0.6)

    # Row gradients as arrays: one numpy expression instead of h draw.line calls.
    rows = np.arange(h, dtype=np.float32)[:, None]
    t_sky = np.clip(rows / max(horizon, 1.0), 0, 1)
    t_ground = np.clip((rows - horizon) / max(h - horizon, 1.0), 0, 1)
    sky = np.array(sky_top, np.float32) * (1 - t_sky) + np.array(sky_low, np.float32) * t_sky
    ground = (
        np.array(ground_far, np.float32) * (1 - t_ground)
        + np.array(ground_near, np.float32) * t_ground
    )
    column = np.where(rows < horizon, sky, ground).astype(np.uint8)
    img.paste(Image.fromarray(column[:, None, :]).resize((w, h), Image.Resampling.NEAREST))

    draw = ImageDraw.Draw(img)
    for _ in range(rng.randint(0, 4)):
        cx = rng.uniform(0, w)
        rx = rng.uniform(0.04, 0.2) * w
        ry = rx * rng.uniform(0.3, 0.8)
        if rng.random() < 0.5:  # a cloud in the sky
            cy = rng.uniform(0, horizon)
            grey = rng.randint(200, 255)
            colour: RGB = (grey, grey, min(255, grey + rng.randint(0, 15)))
        else:  # a bush, a tree crown or a rock on the ground
            cy = rng.uniform(horizon - ry * 0.5, h)
            colour = rng.choice([*ground_palette, _body_colour(rng)])
            colour = _shade(colour, rng.uniform(0.6, 1.0))
        draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=colour)
    return horizon


class _Skins(NamedTuple):
    """The figure's colours, all shades of one body colour."""

    near: RGB  # the body, the near legs, the trunk
    far: RGB  # the far legs, behind the body
    ear: RGB
    line: RGB  # outlines and veins


def _draw_figure(rng: random.Random, kind: str, canvas: _Canvas, skin: RGB) -> None:
    """The elephant itself, in its own frame: body length 1, centre of the body at (0, 0).

    The parts are drawn back to front, and each draws from `rng` in a fixed order: the same
    seed must keep giving byte-identical images."""
    african = kind == "african"
    skins = _skins(rng, skin)
    ground_y = _jitter(rng, 0.55, 0.05)
    _draw_legs(rng, canvas, skins, ground_y)
    _draw_tail(rng, canvas, skins)
    head, blobs = _african_blobs(rng) if african else _asian_blobs(rng)
    _draw_silhouette(rng, canvas, skins, blobs)
    _draw_trunk(rng, canvas, skins, head, ground_y)
    _draw_tusks(rng, canvas, head)
    if african:
        _draw_african_ear(rng, canvas, skins, head)
    else:
        _draw_asian_ear(rng, canvas, skins, head)
    _draw_eye(canvas, skins, head)


def _skins(rng: random.Random, skin: RGB) -> _Skins:
    far = _shade(skin, rng.uniform(0.78, 0.9))
    # The ear is a shade darker or lighter than the body, at the same odds for both kinds, so it
    # reads as a region of its own without its brightness saying anything.
    ear_factor = rng.uniform(0.7, 0.9) if rng.random() < 0.5 else rng.uniform(1.1, 1.25)
    ear = _shade(skin, ear_factor)
    line = _shade(skin, rng.uniform(0.3, 0.5))
    return _Skins(near=skin, far=far, ear=ear, line=line)


def _draw_legs(rng: random.Random, canvas: _Canvas, skins: _Skins, ground_y: float) -> None:
    # The far pair darker and drawn first, so they sit behind the body.
    j = functools.partial(_jitter, rng)
    leg_w = j(0.13)
    legs = [
        (j(0.3), skins.far),
        (j(-0.2), skins.far),
        (j(0.18), skins.near),
        (j(-0.32), skins.near),
    ]
    for lx, colour in legs:
        top, w_top, w_bottom = 0.0, leg_w, leg_w * rng.uniform(0.85, 1.0)
        canvas.polygon(
            [
                (lx - w_top / 2, top),
                (lx + w_top / 2, top),
                (lx + w_bottom / 2, ground_y),
                (lx - w_bottom / 2, ground_y),
            ],
            fill=colour,
        )


def _draw_tail(rng: random.Random, canvas: _Canvas, skins: _Skins) -> None:
    j = functools.partial(_jitter, rng)
    canvas.line([(-0.48, -0.1), (j(-0.56), j(0.15)), (j(-0.55), j(0.3))], skins.near, 0.025)


# A blob of the body's silhouette: centre x, centre y, radius x, radius y.
_Blob = tuple[float, float, float, float]


def _african_blobs(rng: random.Random) -> tuple[Point, list[_Blob]]:
    """Shoulder and hip humps with a saddle between them; the shoulder is the highest point.
    Returns the head's centre and the blobs."""
    j = functools.partial(_jitter, rng)
    head = (j(0.58, 0.04), j(-0.1))
    blobs = [
        (j(0.22, 0.05), -0.02, j(0.26), j(0.34, 0.05)),  # shoulder
        (j(-0.28, 0.05), 0.0, j(0.25), j(0.3, 0.05)),  # hip
        (0.0, j(0.1), 0.5, j(0.2)),  # belly, low enough to leave the saddle
        (head[0], head[1], j(0.16), j(0.19)),  # single-domed head
    ]
    return head, blobs


def _asian_blobs(rng: random.Random) -> tuple[Point, list[_Blob]]:
    """One arched back, highest in the middle; a twin-domed head above the back line.
    Returns the head's centre and the blobs."""
    j = functools.partial(_jitter, rng)
    head = (j(0.56, 0.04), j(-0.2))
    hr = j(0.15)
    dome_r = hr * rng.uniform(0.48, 0.58)
    blobs = [
        (j(-0.03, 0.5), -0.02, j(0.52, 0.04), j(0.35, 0.05)),  # arched body
        (head[0], head[1], hr, j(0.17)),
        (head[0] - hr * 0.45, head[1] - hr * 0.75, dome_r, dome_r),  # twin domes
        (head[0] + hr * 0.45, head[1] - hr * 0.75, dome_r, dome_r),
    ]
    return head, blobs


def _draw_silhouette(
    rng: random.Random, canvas: _Canvas, skins: _Skins, blobs: Sequence[_Blob]
) -> None:
    """Body and head: unions of same-coloured blobs give the silhouettes."""
    # Every blob first a little larger in the line colour, then in skin: what shows of the dark
    # ring is the outline of the union, i.e. the silhouette.
    rim = _jitter(rng, 0.035, 0.2)
    for cx, cy, rx, ry in blobs:
        canvas.polygon(_ellipse(cx, cy, rx + rim, ry + rim), fill=skins.line)
    for cx, cy, rx, ry in blobs:
        canvas.polygon(_ellipse(cx, cy, rx, ry), fill=skins.near)


def _draw_trunk(
    rng: random.Random, canvas: _Canvas, skins: _Skins, head: Point, ground_y: float
) -> None:
    """A tapering curve from the face towards the ground, sometimes curled forward."""
    j = functools.partial(_jitter, rng)
    hx, hy = head
    tip = (hx + j(0.2, 0.4), ground_y - rng.uniform(0.0, 0.3))
    bend = (hx + j(0.2, 0.3), hy + j(0.3))
    trunk = _bezier((hx + 0.06, hy + 0.05), bend, tip)
    widths = [0.13 - 0.08 * k / (len(trunk) - 1) for k in range(len(trunk))]
    canvas.polygon(_thick_curve(trunk, widths), fill=skins.near)


def _draw_tusks(rng: random.Random, canvas: _Canvas, head: Point) -> None:
    # The same odds for both kinds, so ivory pixels tell nothing.
    if rng.random() >= 0.6:
        return
    hx, hy = head
    ivory = (rng.randint(215, 245), rng.randint(205, 235), rng.randint(170, 205))
    length = rng.uniform(0.12, 0.22)
    tusk = _bezier(
        (hx + 0.08, hy + 0.1), (hx + 0.1 + length, hy + 0.18), (hx + 0.12 + length, hy + 0.06)
    )
    canvas.polygon(_thick_curve(tusk, [0.045 - 0.035 * k / 10 for k in range(11)]), ivory)


def _draw_african_ear(rng: random.Random, canvas: _Canvas, skins: _Skins, head: Point) -> None:
    """A large fan shaped a little like the map of Africa: broad at the top, level with the
    shoulder, tapering to a point that hangs below the jaw; veined. Drawn over head and neck."""
    j = functools.partial(_jitter, rng)
    hx, hy = head
    ear_line = j(0.05, 0.2)
    ear = [
        (hx - 0.06, hy - j(0.14)),
        (hx - j(0.2), hy - j(0.3)),
        (hx - j(0.38), hy - j(0.26)),
        (hx - j(0.44), hy - j(0.05, 0.3)),
        (hx - j(0.32), hy + j(0.18)),
        (hx - j(0.16), hy + j(0.4)),
        (hx - j(0.08), hy + j(0.16)),
    ]
    canvas.polygon(_smooth(ear, rounds=1), skins.ear, outline=skins.line, width=ear_line)
    # Veins, curving back from where the ear meets the head.
    root = (hx - 0.07, hy - 0.04)
    for tx, ty in ((0.3, -0.22), (0.4, -0.08), (0.36, 0.1), (0.2, 0.3)):
        tip = (hx - j(tx, 0.1), hy + j(ty, 0.15))
        bend = ((root[0] + tip[0]) / 2, (root[1] + tip[1]) / 2 - 0.05)
        canvas.line(_bezier(root, bend, tip, n=6), skins.line, ear_line * 0.8)


def _draw_asian_ear(rng: random.Random, canvas: _Canvas, skins: _Skins, head: Point) -> None:
    """Small and rounded, low at the side of the head. Drawn over head and neck."""
    j = functools.partial(_jitter, rng)
    hx, hy = head
    ear_line = j(0.05, 0.2)
    canvas.polygon(
        _ellipse(hx - j(0.1), hy + j(0.06), j(0.08), j(0.11)),
        skins.ear,
        outline=skins.line,
        width=ear_line,
    )


def _draw_eye(canvas: _Canvas, skins: _Skins, head: Point) -> None:
    ex, ey = head[0] + 0.07, head[1] - 0.02
    canvas.polygon(_ellipse(ex, ey, 0.018, 0.014, n=8), fill=_shade(skins.near, 0.3))


def _smooth(points: Sequence[Point], rounds: int = 2) -> list[Point]:
    """Chaikin corner cutting: turns a jagged polygon into a rounded one."""
    pts = list(points)
    for _ in range(rounds):
        out: list[Point] = []
        for i, (x0, y0) in enumerate(pts):
            x1, y1 = pts[(i + 1) % len(pts)]
            out.append((0.75 * x0 + 0.25 * x1, 0.75 * y0 + 0.25 * y1))
            out.append((0.25 * x0 + 0.75 * x1, 0.25 * y0 + 0.75 * y1))
        pts = out
    return pts


def draw_elephant(rng: random.Random, kind: str, size: int) -> Image.Image:
    """One `size`×`size` RGB picture of an elephant of `kind` ("african" or "asian") in a random
    pose on a random background, with noise. Uses only `rng`, so it is reproducible."""
    if kind not in CLASSES:
        raise ValueError(f"kind must be one of {', '.join(CLASSES)}, got {kind!r}")
    if size < 8:
        raise ValueError(f"size must be at least 8 pixels, got {size}")
    big = size * _SUPERSAMPLE
    img = Image.new("RGB", (big, big))
    _draw_background(rng, img)

    # The figure is drawn on its own transparent layer, then its bounding box is placed
    # uniformly in the frame: where the animal stands must not depend on its kind, or the
    # layout alone (where the dark pixels are) would give the class away.
    body_px = big * rng.uniform(0.6, 0.72)
    layer = Image.new("RGBA", (2 * big, 2 * big), (0, 0, 0, 0))
    canvas = _Canvas(
        ImageDraw.Draw(layer),
        scale=body_px,
        angle=math.radians(rng.uniform(-8, 8)),
        flip=rng.random() < 0.5,
        offset=(big, big),
    )
    _draw_figure(rng, kind, canvas, _body_colour(rng))
    bbox = layer.getbbox(alpha_only=True)
    if bbox is not None:
        figure = layer.crop(bbox)
        w, h = figure.size
        # A figure larger than the frame is cut at a random place rather than always centred.
        x = round(rng.uniform(min(0, big - w), max(0, big - w)))
        y = round(rng.uniform(min(0, big - h), max(0, big - h)))
        img.paste(figure, (x, y), figure)

    img = img.reduce(_SUPERSAMPLE)
    if rng.random() < 0.15:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    sigma = rng.uniform(0.0, 6.0)
    if sigma > 0.5:
        noise_rng = np.random.default_rng(rng.getrandbits(64))
        arr = np.asarray(img, dtype=np.float32)
        arr += noise_rng.normal(0.0, sigma, size=arr.shape).astype(np.float32)
        img = Image.fromarray(np.clip(arr + 0.5, 0, 255).astype(np.uint8))
    return img

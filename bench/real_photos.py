#!/usr/bin/env python3
"""Build a folder of REAL camera images, DIR/<class>/<file>, from registry packages.

Only the ordinary registry clients are used (pip download / apt-get download);
the rest is the standard library plus Pillow.

Sources (--source):
  elpv      PyPI  elpv-dataset==1.0.0.post1 (wheel bundles 2,624 real
            electroluminescence camera images of solar cells, 300x300 8-bit
            grayscale PNG, expert-labelled).  Licence: CC-BY-NC-SA-4.0
            (images; non-commercial!) AND Apache-2.0 (code).
            Classes (--elpv-by defect, default): functional (defect prob 0.0)
            vs defective (defect prob 1.0); the 401 uncertain ones are skipped.
            --elpv-by type: mono vs poly (crystal type, all 2,624).
  tuxpaint  Debian tuxpaint-stamps-default (2022.06.04-1): Tux Paint stamps,
            mostly real photographs cut out on a transparent background.
            Licence: GPL-2 (debian/copyright).  Classes: animals vs plants_food
            (stamps/animals vs stamps/plants + stamps/food, "cartoon"
            sub-folders excluded).  Flattened on white and saved as RGB JPEG.

Usage: python bench/real_photos.py --out /tmp/realphotos/set [--source elpv]
"""
import argparse
import io
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

from PIL import Image

ELPV_REQ = "elpv-dataset==1.0.0.post1"
TUX_PKG = "tuxpaint-stamps-default"
TUX_VER = "2022.06.04-1"


def run(cmd, cwd=None):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, check=True)


# ---------------------------------------------------------------- fetching
def fetch_wheel(req, cache):
    cache.mkdir(parents=True, exist_ok=True)
    name = req.split("==")[0].replace("-", "_")
    found = sorted(cache.glob(name + "-*.whl"))
    if not found:
        run([sys.executable, "-m", "pip", "download", "--no-deps",
             "--only-binary=:all:", "-d", str(cache), req])
        found = sorted(cache.glob(name + "-*.whl"))
    return found[-1]


def fetch_deb(pkg, ver, cache):
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(pkg + "_*.deb"))
    if not found:
        try:
            run(["apt-get", "download", f"{pkg}={ver}"], cwd=cache)
        except subprocess.CalledProcessError:
            run(["apt-get", "download", pkg], cwd=cache)  # other version
        found = sorted(cache.glob(pkg + "_*.deb"))
    return found[-1]


def deb_data_tar(deb_path):
    """Return an open tarfile of a .deb's data.tar.* (ar parsed by hand)."""
    with open(deb_path, "rb") as f:
        if f.read(8) != b"!<arch>\n":
            raise ValueError(f"not a .deb (ar) file: {deb_path}")
        while True:
            hdr = f.read(60)
            if len(hdr) < 60:
                break
            name = hdr[:16].decode().strip().rstrip("/")
            size = int(hdr[48:58].decode().strip())
            data = f.read(size)
            if size % 2:
                f.read(1)
            if name.startswith("data.tar"):
                return tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    raise ValueError(f"no data.tar in {deb_path}")


# ---------------------------------------------------------------- writing
def save_jpeg(im, dst):
    if im.mode in ("RGBA", "LA", "P"):
        im = im.convert("RGBA")
        bg = Image.new("RGB", im.size, (255, 255, 255))
        bg.paste(im, mask=im.getchannel("A"))
        im = bg
    im.convert("RGB").save(dst, "JPEG", quality=92)


def build_elpv(out, cache, by, force_jpeg, limit):
    whl = fetch_wheel(ELPV_REQ, cache)
    counts = Counter()
    with zipfile.ZipFile(whl) as z:
        rows = z.read("elpv_dataset/data/labels.csv").decode().split("\n")
        for line in rows:
            parts = line.split()
            if len(parts) != 3:
                continue
            rel, prob, ctype = parts[0], float(parts[1]), parts[2]
            if by == "type":
                cls = ctype
            elif prob == 0.0:
                cls = "functional"
            elif prob == 1.0:
                cls = "defective"
            else:
                continue  # 0.33 / 0.67: uncertain, skipped
            if limit and counts[cls] >= limit:
                continue
            data = z.read("elpv_dataset/data/" + rel)
            d = out / cls
            d.mkdir(parents=True, exist_ok=True)
            stem = Path(rel).stem
            if force_jpeg:
                save_jpeg(Image.open(io.BytesIO(data)), d / (stem + ".jpg"))
            else:
                (d / Path(rel).name).write_bytes(data)  # original PNG
            counts[cls] += 1
    return counts


def build_tuxpaint(out, cache, limit):
    deb = fetch_deb(TUX_PKG, TUX_VER, cache)
    root = "./usr/share/tuxpaint/stamps/"
    groups = {"animals": ("animals/",), "plants_food": ("plants/", "food/")}
    counts = Counter()
    with deb_data_tar(deb) as tar:
        for m in tar.getmembers():
            n = m.name if m.name.startswith("./") else "./" + m.name
            if not (m.isfile() and n.startswith(root) and n.endswith(".png")):
                continue
            rel = n[len(root):]
            if "cartoon" in rel.split("/"):
                continue
            cls = next((c for c, pre in groups.items()
                        if rel.startswith(pre)), None)
            if cls is None or (limit and counts[cls] >= limit):
                continue
            im = Image.open(io.BytesIO(tar.extractfile(m).read()))
            d = out / cls
            d.mkdir(parents=True, exist_ok=True)
            name = rel[:-4].replace("/", "__") + ".jpg"
            save_jpeg(im, d / name)
            counts[cls] += 1
    return counts


def report(out):
    for d in sorted(p for p in out.iterdir() if p.is_dir()):
        files = sorted(p for p in d.iterdir() if p.is_file())
        sizes, modes = Counter(), Counter()
        for f in files:
            with Image.open(f) as im:
                sizes[im.size] += 1
                modes[f"{im.format}/{im.mode}"] += 1
        top = ", ".join(f"{w}x{h}:{c}" for (w, h), c in sizes.most_common(3))
        print(f"  {d.name:12s} {len(files):5d} images  "
              f"formats {dict(modes)}  sizes {top}"
              f"{' ...' if len(sizes) > 3 else ''}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder DIR")
    ap.add_argument("--source", choices=["elpv", "tuxpaint"], default="elpv")
    ap.add_argument("--cache", default=str(Path(__file__).resolve().parent
                                           / "cache"),
                    help="where downloaded packages are kept")
    ap.add_argument("--elpv-by", choices=["defect", "type"], default="defect")
    ap.add_argument("--jpeg", action="store_true",
                    help="elpv: write RGB JPEG instead of the original PNG")
    ap.add_argument("--limit", type=int, default=0,
                    help="at most N images per class (0 = all)")
    ap.add_argument("--force", action="store_true",
                    help="delete --out first if it exists")
    a = ap.parse_args()
    out, cache = Path(a.out), Path(a.cache)
    if out.exists() and any(out.iterdir()):
        if not a.force:
            sys.exit(f"{out} exists and is not empty (use --force)")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    if a.source == "elpv":
        counts = build_elpv(out, cache, a.elpv_by, a.jpeg, a.limit)
    else:
        counts = build_tuxpaint(out, cache, a.limit)
    print(f"wrote {sum(counts.values())} images to {out}: {dict(counts)}")
    report(out)


if __name__ == "__main__":
    main()

"""Two wording snapshots (`bench/snapshot_words.py`) compared, per key and grouped: which texts
differ, in how many comparisons, and how (the lines taken out and put in).

    python bench/snapshot_diff.py BEFORE.json AFTER.json [--examples N] [--common]

Blocks kept once (`shared:<hash>`) are read in place, so a changed block shows where it is
shown. A comparison's name (`0123-bf16-xla-faster-train-stop-measuring`) is replaced by `*` in
the group's key, so the same change in 40 comparisons is one group with its count and a few
names. `--common`: compare only the comparisons both snapshots have (a trial on part of the
corpus). Exit status 0 when nothing differs, 1 otherwise.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

# The top-level keys whose next key is a comparison's folder name.
PER_COMPARISON = ("comparisons", "history")


def resolved(value: Any, shared: dict[str, Any]) -> Any:
    """`value` with each `shared:<hash>` reference replaced by what it stands for."""
    if isinstance(value, str) and value.startswith("shared:") and value in shared:
        return resolved(shared[value], shared)
    if isinstance(value, list):
        return [resolved(v, shared) for v in value]
    if isinstance(value, dict):
        return {k: resolved(v, shared) for k, v in value.items()}
    return value


def leaves(value: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every text of `value` by its path: a string, or a list of strings kept whole (lines,
    compared as lines); dicts and other lists are walked into."""
    if isinstance(value, dict):
        out: dict[tuple[str, ...], Any] = {}
        for k, v in value.items():
            out.update(leaves(v, (*path, str(k))))
        return out
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(leaves(v, (*path, f"[{i}]")))
        return out
    return {path: value}


def without(value: Any, name: str) -> Any:
    """`value` without any dict key `name`, at any depth."""
    if isinstance(value, dict):
        return {k: without(v, name) for k, v in value.items() if k != name}
    if isinstance(value, list):
        return [without(v, name) for v in value]
    return value


def count_texts(value: Any) -> int:
    if isinstance(value, dict):
        return sum(count_texts(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_texts(v) for v in value)
    return 1


def change(before: Any, after: Any) -> tuple[str, ...]:
    """How a text changed, as "- line" / "+ line" (a missing text is "(absent)")."""
    def lines(v: Any) -> list[str]:
        if v is _ABSENT:
            return ["(absent)"]
        if isinstance(v, list):
            return [str(x) for x in v]
        return [json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v]

    a, b = lines(before), lines(after)
    return tuple(d for d in difflib.ndiff(a, b) if d[:1] in "-+")


_ABSENT = object()


def group_key(path: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The path with a comparison's (or a bad dataset's) name and list positions as `*`, and
    what was starred (the example's name)."""
    named = list(path)
    starred = []
    if len(path) > 1 and path[0] in (*PER_COMPARISON, "bad datasets"):
        starred.append(path[1])
        named[1] = "*"
    for i, part in enumerate(named):
        if part.startswith("[") and part.endswith("]"):
            starred.append(part)
            named[i] = "[*]"
    return tuple(named), "".join(starred[:1]) + "".join(f"{p}" for p in starred[1:])


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    shared = data.pop("shared", {})
    data.pop("meta", None)
    return resolved(data, shared)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--examples", type=int, default=3, help="names shown per group")
    parser.add_argument("--common", action="store_true",
                        help="only the comparisons both snapshots have")
    parser.add_argument("--skip", action="append", default=[],
                        help="leave out every key of this name (e.g. window, for --no-window)")
    args = parser.parse_args(argv)
    before, after = load(args.before), load(args.after)
    if args.common:
        for top in PER_COMPARISON:
            both = set(before.get(top, {})) & set(after.get(top, {}))
            for data in (before, after):
                data[top] = {k: v for k, v in data.get(top, {}).items() if k in both}
    for name in args.skip:
        before, after = without(before, name), without(after, name)
    a, b = leaves(before), leaves(after)
    print(f"texts: {count_texts(before):,} before, {count_texts(after):,} after; "
          f"{len(a):,} and {len(b):,} keys")
    # (group, change) → the names it happened in
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = defaultdict(list)
    for path in sorted(set(a) | set(b)):
        old, new = a.get(path, _ABSENT), b.get(path, _ABSENT)
        if old == new:
            continue
        key, name = group_key(path)
        groups[(key, change(old, new))].append(name)
    by_key: dict[tuple[str, ...], list[tuple[tuple[str, ...], list[str]]]] = defaultdict(list)
    for (key, how), names in groups.items():
        by_key[key].append((how, names))
    for key in sorted(by_key):
        print(f"\n== {' / '.join(key)}")
        for how, names in sorted(by_key[key], key=lambda x: -len(x[1])):
            shown = [n for n in names if n][: args.examples]
            rest = ", …" if len(names) > len(shown) else ""
            more = f" (in {len(names)}: {', '.join(shown)}{rest})"
            print(f"  --{more if any(names) else ''}")
            for line in how[:40]:
                print(f"    {line[:300]}")
            if len(how) > 40:
                print(f"    … {len(how) - 40} more lines")
    print(f"\n{sum(len(n) for n in groups.values()):,} texts differ, in {len(by_key)} keys, "
          f"{len(groups)} groups")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())

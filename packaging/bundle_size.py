"""Size of the built bundle and what dominates it: `make bundle` prints this after a build.

    python packaging/bundle_size.py dist/meaningbench [--json OUT]

The goal is at most 1.2 GB unpacked (GB = 10^9 bytes) with the CPU build of torch; the
exit status is 1 above it, so a dependency that drags in CUDA or Qt WebEngine is noticed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

GOAL_BYTES = 1_200_000_000


def tree_size(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    total = tree_size(args.bundle)
    inner = args.bundle / "_internal"
    parts = {p.name: tree_size(p) for p in (inner if inner.is_dir() else args.bundle).iterdir()}
    torch_lib = inner / "torch" / "lib"
    if torch_lib.is_dir():  # torch's own size is mostly its libraries: name them
        for p in torch_lib.iterdir():
            parts[f"torch/lib/{p.name}"] = tree_size(p)
    print(f"{args.bundle}: {total / 1e9:.2f} GB unpacked (goal {GOAL_BYTES / 1e9:.1f} GB)")
    for name, size in sorted(parts.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {size / 1e6:9.1f} MB  {name}")
    if args.json:
        args.json.write_text(json.dumps({"total_bytes": total, "parts": parts}, indent=2))
    return 0 if total <= GOAL_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())

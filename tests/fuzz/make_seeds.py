"""Write the fuzzer's seed inputs (examples, a sample of the shared corpus, hostile shapes)
to tests/fuzz/seeds/ (ignored by git)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"

HOSTILE = [
    b"a: &a [1, 2]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    b"base: &base {x: 1}\nother:\n  <<: *base\n  y: 2\n",
    b"\xef\xbb\xbfapiVersion: v1\r\nkind: Pod\r\n",
    b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"\\e[31mred\\ud800\"\n",
    b"x: !!python/object/apply:os.system ['true']\n",
    b"[" * 200 + b"]" * 200,
    b"key: |\n  text\n---\n  more\n",
    b"\x00\x01\x02binary\xff\xfe",
]


def main() -> None:
    out = REPO / "tests" / "fuzz" / "seeds"
    out.mkdir(exist_ok=True)
    files = sorted((REPO / "examples").rglob("*.yaml"))
    if CORPUS.is_dir():
        corpus = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml"))
        files += [p for p in corpus[::8] if p.stat().st_size < 20_000]
    blobs = [f.read_bytes() for f in files] + HOSTILE
    for blob in blobs:
        (out / hashlib.sha1(blob).hexdigest()).write_bytes(blob)
    print(f"{len(blobs)} seeds in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

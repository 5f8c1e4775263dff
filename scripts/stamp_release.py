"""Mark the checkout a release build is made from as released.

The release workflow (.github/workflows/release.yml) runs this on the push of a tag, before it
builds. It stops unless the tag is `v` + the package's version, that version is a final release
(X.Y.Z: no dev, pre, post or local part) and CHANGELOG.md has a dated section for it; then it
sets `RELEASED = True` in kubegap_lint/__init__.py, so the sdist and wheel built next link
their SARIF help to the tag's docs. Nothing else sets it: a build from any other tree links to the
default branch (docs/sarif.md, "helpUri").

    python scripts/stamp_release.py v0.2.0 [--root DIR]

Exit 0 when stamped, 1 with one line saying what does not match.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

FINAL_RELEASE = re.compile(r"\d+\.\d+\.\d+")
VERSION_LINE = re.compile(r'^__version__ = "([^"]*)"$', re.MULTILINE)
UNRELEASED_LINE = re.compile(r"^RELEASED = False$", re.MULTILINE)


class StampError(Exception):
    pass


def stamp(root: Path, tag: str) -> str:
    """Check tag, version and changelog under root, set RELEASED = True; return the version."""
    init = root / "kubegap_lint" / "__init__.py"
    source = init.read_text(encoding="utf-8")
    versions = VERSION_LINE.findall(source)
    if len(versions) != 1:
        raise StampError(f"{init}: expected one __version__ line, found {len(versions)}")
    version = versions[0]
    if tag != f"v{version}":
        raise StampError(f"tag {tag!r} does not name the package version {version!r} (expected 'v{version}')")
    if not FINAL_RELEASE.fullmatch(version):
        raise StampError(f"version {version!r} is not a final release X.Y.Z")
    changelog = root / "CHANGELOG.md"
    heading = re.compile(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", re.MULTILINE)
    if not heading.search(changelog.read_text(encoding="utf-8")):
        raise StampError(f"{changelog}: no dated section '## [{version}] - YYYY-MM-DD'")
    stamped, count = UNRELEASED_LINE.subn("RELEASED = True", source)
    if count != 1:
        raise StampError(f"{init}: expected one line 'RELEASED = False', found {count}")
    init.write_text(stamped, encoding="utf-8")
    return version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag", help="the pushed tag, e.g. v0.2.0")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout to stamp (default: this one)")
    args = parser.parse_args(argv)
    try:
        version = stamp(args.root, args.tag)
    except (StampError, OSError) as exc:
        print(f"stamp_release: {exc}", file=sys.stderr)
        return 1
    print(f"stamp_release: {args.tag} is version {version}, dated in CHANGELOG.md; RELEASED = True")
    return 0


if __name__ == "__main__":
    sys.exit(main())

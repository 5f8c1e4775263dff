"""Chart.yaml `kubeVersion`, checked as Helm checks it before it renders.

Helm refuses a chart whose `kubeVersion` constraint the target Kubernetes version does not meet
("chart requires kubeVersion: C which is incompatible with Kubernetes V"); `helm template` takes
V from `--kube-version`, else its built-in default. The engine does not check, so this module
does, with the constraint language Helm uses (Masterminds semver v3): `||` between alternatives,
commas or blanks between constraints that must all hold, operators `=` `!=` `>` `<` `>=` `<=`
`~` `~>` `^`, `x`/`*` or missing parts as wildcards, `A - B` ranges, and a version with a
pre-release (`v1.29.4-gke.100`) meeting only constraints that carry one (`>=1.28.0-0`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PART = r"[0-9xX*]+"
_VERSION = (rf"v?({_PART})(\.{_PART})?(\.{_PART})?"
            r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")
_OPS = r"=|!=|>|<|>=|=>|<=|=<|~|~>|\^"
_ONE = re.compile(rf"^\s*({_OPS}|)\s*({_VERSION})\s*$")
_FIND = re.compile(rf"({_OPS}|)\s*({_VERSION})")
_VALID = re.compile(rf"^(\s*(?:{_OPS}|)\s*(?:{_VERSION})\s*)((?:\s+|,\s*)(?:{_OPS}|)\s*(?:{_VERSION})\s*)*$")
_RANGE = re.compile(rf"\s*({_VERSION})\s+-\s+({_VERSION})\s*")
_PLAIN = re.compile(r"^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
                    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$")


class ConstraintError(ValueError):
    pass


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: str = ""

    def compare(self, other: Version) -> int:
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        return _compare_pre(self.pre, other.pre)


def _compare_pre(one: str, other: str) -> int:
    """Semantic versioning's order of pre-releases; none ranks above any."""
    if one == other:
        return 0
    if not one:
        return 1
    if not other:
        return -1
    a, b = one.split("."), other.split(".")
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return (len(a) > len(b)) - (len(a) < len(b))


def parse_version(text: str) -> Version | None:
    match = _PLAIN.match(text.strip())
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    return Version(int(major), int(minor or 0), int(patch or 0), pre or "")


@dataclass(frozen=True)
class _Constraint:
    op: str
    version: Version
    dirty: bool
    minor_dirty: bool
    patch_dirty: bool

    def check(self, v: Version) -> bool:
        con, op = self.version, self.op
        if v.pre and not con.pre:
            return False  # a pre-release meets only constraints that name one
        if op in ("", "="):
            return self._tilde(v) if self.dirty else v.compare(con) == 0
        if op == "!=":
            return self._not_equal(v)
        if op == ">":
            if not self.dirty:
                return v.compare(con) > 0
            if v.major != con.major:
                return v.major > con.major
            if self.minor_dirty:
                return False
            if self.patch_dirty:
                return v.minor > con.minor
            return v.compare(con) > 0
        if op == "<":
            return v.compare(con) < 0
        if op in (">=", "=>"):
            return v.compare(con) >= 0
        if op in ("<=", "=<"):
            if not self.dirty:
                return v.compare(con) <= 0
            return not (v.major > con.major or v.major == con.major and v.minor > con.minor and not self.minor_dirty)
        if op in ("~", "~>"):
            return self._tilde(v)
        return self._caret(v)

    def _tilde(self, v: Version) -> bool:
        con = self.version
        if v.compare(con) < 0:
            return False
        if (con.major, con.minor, con.patch) == (0, 0, 0) and not self.minor_dirty and not self.patch_dirty:
            return True
        return v.major == con.major and (v.minor == con.minor or self.minor_dirty)

    def _not_equal(self, v: Version) -> bool:
        con = self.version
        if self.dirty:
            if con.major != v.major:
                return True
            if self.minor_dirty:
                return False
            if con.minor != v.minor:
                return True
            if not self.patch_dirty and con.patch != v.patch:
                return True
            if self.patch_dirty:
                return (bool(v.pre) or bool(con.pre)) and _compare_pre(v.pre, con.pre) != 0
        return v.compare(con) != 0

    def _caret(self, v: Version) -> bool:
        con = self.version
        if v.compare(con) < 0:
            return False
        if con.major > 0 or self.minor_dirty:
            return v.major == con.major
        if v.major > 0:
            return False
        if con.minor > 0 or self.patch_dirty:
            return v.minor == con.minor
        return v.minor == 0 and v.patch == con.patch


def _is_x(part: str) -> bool:
    return part in ("x", "X", "*")


def _one(text: str) -> _Constraint:
    match = _ONE.match(text)
    if match is None:
        raise ConstraintError(f"improper constraint: {text}")
    op, _, major, minor, patch, pre = match.groups()
    minor, patch = (minor or "").lstrip("."), (patch or "").lstrip(".")
    dirty = minor_dirty = patch_dirty = False
    if _is_x(major):
        version, dirty = Version(0, 0, 0, pre or ""), True
    elif _is_x(minor) or not minor:
        version, dirty, minor_dirty = Version(int(major), 0, 0, pre or ""), True, True
    elif _is_x(patch) or not patch:
        version, dirty, patch_dirty = Version(int(major), int(minor), 0, pre or ""), True, True
    else:
        version = Version(int(major), int(minor), int(patch), pre or "")
    return _Constraint(op, version, dirty, minor_dirty, patch_dirty)


def satisfies(constraint: str, version: str) -> bool:
    """Whether the version meets the constraint; ConstraintError when either cannot be read
    (Helm then refuses the chart too)."""
    parsed = parse_version(version)
    if parsed is None:
        raise ConstraintError(f"invalid Kubernetes version {version!r}")
    text = _RANGE.sub(lambda m: f" >= {m.group(1)}, <= {m.group(6)} ", constraint)
    for alternative in text.split("||"):
        if not _VALID.match(alternative):
            raise ConstraintError(f"improper constraint: {alternative.strip()}")
        found = [m.group(0) for m in _FIND.finditer(alternative)]
        if all(_one(piece).check(parsed) for piece in found):
            return True
    return False

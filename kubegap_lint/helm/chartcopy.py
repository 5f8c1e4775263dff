"""A chart folder copied as Helm's loader reads it, and no further.

Helm's loader follows symbolic links anywhere (`env -> /proc/self/environ` would be read by
`.Files.Get` and published in findings) and reads every file whole. So the engine never sees a
repository's chart folder: it renders this copy, made by walking the chart the way the loader
does (sorted, `.helmignore` and its default rule honoured before anything is opened) with these
refusals, each one message for the caller to report at the chart's Chart.yaml:

- a symbolic link whose target is outside the chart folder, or a link loop;
- anything but a regular file (FIFO, device, socket) and any file of /proc or /sys;
- a file over MAX_FILE_BYTES, and everything past MAX_CHART_BYTES or MAX_CHART_FILES;
- a `values.schema.json` with a `$ref` outside itself (no network, no other file).

The copy holds no links: Helm reads only what was checked here. What is refused is left out and
the rest renders (a template that needed it fails or renders without it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubegap_lint.core.safefile import read_regular

if TYPE_CHECKING:
    from kubegap_lint.core.model import InputError

# Helm's own bounds for a chart archive (loader.MaxDecompressedFileSize, MaxDecompressedChartSize).
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_CHART_BYTES = 100 * 1024 * 1024
MAX_CHART_FILES = 10_000
MAX_DEPTH = 64  # folders below the chart, links to folders included
IGNORE_FILE = ".helmignore"
SCHEMA_FILE = "values.schema.json"


@dataclass
class _Rule:
    pattern: re.Pattern[str]
    negate: bool
    must_dir: bool
    base_only: bool  # no `/` in the rule: it matches a path's last name


def _go_glob(pattern: str) -> re.Pattern[str]:
    """Go's filepath.Match as a regular expression: `*` and `?` never cross a `/`."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        elif char == "[":
            end = pattern.find("]", index + 2)
            if end < 0:
                raise ValueError("unclosed [")
            body = pattern[index + 1:end]
            negate = body.startswith("^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out) + r"\Z")


def parse_ignore(text: str) -> list[_Rule]:
    """The rules of a `.helmignore` (Helm's pkg/ignore), with the default `templates/.?*` after
    them; a rule Helm would refuse (`**`, a bad class) is skipped."""
    rules: list[_Rule] = []
    for line in [*text.splitlines(), "templates/.?*"]:
        rule = line.strip()
        if not rule or rule.startswith("#") or "**" in rule:
            continue
        negate = rule.startswith("!")
        rule = rule[1:] if negate else rule
        must_dir = rule.endswith("/")
        rule = rule.rstrip("/") if must_dir else rule
        base_only = "/" not in rule
        try:
            pattern = _go_glob(rule.lstrip("/"))
        except (ValueError, re.error):
            continue
        rules.append(_Rule(pattern, negate, must_dir, base_only))
    return rules


def ignored(rules: list[_Rule], path: str, is_dir: bool) -> bool:
    """Helm's Rules.Ignore for a path relative to the chart (`/`-separated)."""
    for rule in rules:
        name = path.rsplit("/", 1)[-1] if rule.base_only else path
        matched = rule.pattern.match(name) is not None
        if rule.negate:
            if (rule.must_dir and not is_dir) or not matched:
                return True
            continue
        if rule.must_dir and not is_dir:
            continue
        if matched:
            return True
    return False


@dataclass
class _Copy:
    root: str  # the chart's real path
    dest: str
    rules: list[_Rule]
    refused: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    full: bool = False


def copy_chart(chart_dir: str, dest: str) -> list[str]:
    """Copy the chart folder into dest (a new folder) as Helm would load it; the refusals, one
    message each, in walk order."""
    root = os.path.realpath(chart_dir)
    os.makedirs(dest, mode=0o700)
    rules: list[_Rule] = []
    state = _Copy(root, dest, rules)
    try:
        text = read_regular(os.path.join(root, IGNORE_FILE), MAX_FILE_BYTES, follow=False).decode("utf-8", "replace")
        rules.extend(parse_ignore(text))
    except FileNotFoundError:
        rules.extend(parse_ignore(""))
    except OSError as exc:
        rules.extend(parse_ignore(""))
        state.refused.append(f"{IGNORE_FILE}: not read: {exc.strerror or exc}")
    _walk(state, root, "", (root,))
    return state.refused


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _walk(state: _Copy, folder: str, relative: str, stack: tuple[str, ...]) -> None:
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        state.refused.append(f"{relative or '.'}: folder not read: {exc.strerror or exc}")
        return
    for name in names:
        if state.full:
            return
        path = os.path.join(folder, name)
        shown = f"{relative}{name}"
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
            real = os.path.realpath(path) if link else path
            info = os.stat(real)  # status only: nothing is opened before the checks below
        except OSError as exc:
            if not ignored(state.rules, shown, False):
                state.refused.append(f"{shown}: not read: {exc.strerror or exc} (a dangling symbolic link?)")
            continue
        is_dir = stat.S_ISDIR(info.st_mode)
        if ignored(state.rules, shown, is_dir):
            continue  # as Helm: an ignored entry is never opened, whatever it is
        if link and not _inside(real, state.root):
            state.refused.append(f"{shown}: symbolic link out of the chart folder: not read")
            continue
        if is_dir:
            if real in stack or len(stack) > MAX_DEPTH:
                state.refused.append(f"{shown}: symbolic link loop or folders nested too deep: not read")
                continue
            os.makedirs(os.path.join(state.dest, shown), mode=0o700, exist_ok=True)
            _walk(state, real, f"{shown}/", (*stack, real))
            continue
        _copy_file(state, real, shown)


def _copy_file(state: _Copy, real: str, shown: str) -> None:
    if state.files >= MAX_CHART_FILES:
        state.refused.append(f"{shown}: the chart has over {MAX_CHART_FILES:,} files: this one and the rest not read")
        state.full = True
        return
    try:
        data = read_regular(real, MAX_FILE_BYTES, follow=False)
    except OSError as exc:
        state.refused.append(f"{shown}: not read: {exc.strerror or exc}")
        return
    if state.bytes + len(data) > MAX_CHART_BYTES:
        state.refused.append(f"{shown}: the chart is over {MAX_CHART_BYTES:,} bytes: this file and the rest not read")
        state.full = True
        return
    if shown.rsplit("/", 1)[-1] == SCHEMA_FILE and _schema_reaches_out(data):
        state.refused.append(f"{shown}: a $ref outside the schema (a URL or another file): not read")
        return
    state.files += 1
    state.bytes += len(data)
    target = os.path.join(state.dest, shown)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _schema_reaches_out(data: bytes) -> bool:
    """A values schema with a `$ref` that is not a pointer into itself (`#/...`): the engine would
    fetch an http(s) one over the network, and read and quote a `file://` one."""
    import json

    try:
        schema = json.loads(data)
    except (ValueError, RecursionError):
        return False  # not JSON: the engine reports it
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None and not (isinstance(ref, str) and ref.startswith("#")):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


@contextmanager
def chart_to_render(chart: str) -> Iterator[tuple[str, list[InputError]]]:
    """What Helm is given for a chart: a folder's checked copy in a private scratch folder, with
    an error at its Chart.yaml for each refusal; an archive as it is. OSError when there is no
    private temp folder."""
    from kubegap_lint.core.model import InputError
    from kubegap_lint.core.tempdir import scratch_folder

    if not os.path.isdir(chart):
        yield chart, []
        return
    with scratch_folder("chart-") as scratch:
        copy = os.path.join(scratch, os.path.basename(os.path.realpath(chart)) or "chart")
        refused = copy_chart(chart, copy)
        where = os.path.join(chart, "Chart.yaml").replace(os.sep, "/")
        yield copy, [InputError(where, f"chart file {reason}", 1, 1) for reason in refused]

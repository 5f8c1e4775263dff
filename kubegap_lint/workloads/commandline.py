"""What a command line tells: the launchers it runs, the variables it sets, its words, the
process-group backend it chooses and the paths it names. Read once per distinct line per run
(cached in the run's ViewContext: `command`): a stream repeats its command lines.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from kubegap_lint.core.coerce import as_list

# The scans over command lines below are searched in " " + text: the space stands for the
# text's start, so a pattern needs no `^|` alternative and begins with a character class or a
# literal, which the regex engine skips to without trying every position (2-10x faster).
# Launchers a command line runs: a name after the text's start, white space or one of
# `/;&|("'`, and before its end, white space or one of `;&|)"'`. All but `accelerate launch`
# are literal names, found with str.find (4x faster than one pattern for all of them).
_LAUNCHER_NAMES = ("torchrun", "torch.distributed.run", "torch.distributed.launch", "deepspeed")
_BEFORE_LAUNCHER = "/;&|(\"'"
_AFTER_LAUNCHER = ";&|)\"'"
_ACCELERATE_RE = re.compile(r"[\s/;&|(\"']accelerate\s+launch(?=$|[\s;&|)\"'])")  # in " " + text
# `(?:^|[\s;&|(])(?:export\s+)?NAME=value`, in " " + text; without the `export\s+`, as the white
# space before NAME is one of the characters before it anyway (the same matches, 1.7x faster)
_EXPORT_RE = re.compile(r"[\s;&|(]([A-Z][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;&|)]*)")
_MPI_X_RE = re.compile(r"(?:^|\s)-x\s+([A-Za-z_][A-Za-z0-9_]*)(?:=([^\s;&|)]*))?")


UNRENDERED_RE = re.compile(r"\$\(?\{?[A-Za-z_]")


def env_text(value: Any) -> str | None:
    """An env value as text; None when it is not known from the manifest alone."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if UNRENDERED_RE.search(text):  # $(VAR), ${VAR}, $VAR: set at run time
        return None
    return text



def strings(value: Any) -> list[str]:
    return [str(v) for v in as_list(value) if v is not None]


def command_text(container: dict[str, Any]) -> str:
    """command and args as one shell-like string, for launcher and script scans."""
    parts = strings(container.get("command")) + strings(container.get("args"))
    return " ".join(parts)


def launchers(text: str) -> tuple[str, ...]:
    """The launchers a command line runs (torchrun, deepspeed, `accelerate launch` ...), sorted."""
    found = []
    for name in _LAUNCHER_NAMES:
        start = text.find(name)
        while start != -1:
            end = start + len(name)
            before = text[start - 1] if start else " "
            if (before.isspace() or before in _BEFORE_LAUNCHER) and \
                    (end == len(text) or text[end].isspace() or text[end] in _AFTER_LAUNCHER):
                found.append(name)
                break
            start = text.find(name, start + 1)
    if "accelerate" in text and _ACCELERATE_RE.search(" " + text):
        found.append("accelerate launch")
    return tuple(sorted(found))


def script_env(text: str) -> dict[str, str | None]:
    """Variables a command line sets: `export X=1`, `X=1 cmd`, and `mpirun -x X[=1]`."""
    found: dict[str, str | None] = {}
    if "=" in text:  # what every assignment holds
        for match in _EXPORT_RE.finditer(" " + text):
            value = match.group(2)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            found[match.group(1)] = value
    if "-x" in text:
        for match in _MPI_X_RE.finditer(text):
            found.setdefault(match.group(1), match.group(2))
    return found


_BACKEND_FLAGS = ("--backend", "--dist-backend", "--dist_backend", "--distributed-backend",
                  "--distributed_backend")
_BACKEND_FLAG_RE = re.compile(r"--(?:dist(?:ributed)?[-_])?backend")  # any of _BACKEND_FLAGS, in one search


def torch_backend(words: list[str]) -> str | None:
    """The process-group backend a command line chooses explicitly (`--backend gloo`), if any."""
    for position, word in enumerate(words):
        flag, _, value = word.partition("=")
        if flag in _BACKEND_FLAGS:
            if not value and position + 1 < len(words):
                value = words[position + 1]
            return value.lower() or None
    return None


def words_of(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # unbalanced quotes in a script: fall back to white space
        return text.split()


def may_name_backend(text: str) -> bool:
    """Could a word of the text start with one of _BACKEND_FLAGS? A word is the text's
    characters with quotes and backslashes taken out, so a text that holds none of the flags
    then has no word torch_backend reads (`--rdzv_backend=c10d` is none of them)."""
    if "'" in text or '"' in text or "\\" in text:
        text = text.replace("'", "").replace('"', "").replace("\\", "")  # str.translate is slower
    return "backend" in text and _BACKEND_FLAG_RE.search(text) is not None


# A path-like value: starts with one `/` after white space, a quote, `=`, `,`, `(` or `;`, so
# `--save=/ckpt` and `bash -c "... /ckpt"` count; the path part of `gs://b/ckpt` does not.
# `(?:^|(?<=[\s'"=,(;]))/(?!/)...`, in " " + text, the `/` first: the engine finds each `/` at
# once and looks behind it only there. A variable in the path (`$VAR`, `${VAR}`, Kubernetes'
# `$(VAR)`) is part of it; a command substitution (`$(date +%s)`) ends it.
_PATH_RE = re.compile(
    r"""/(?<=[\s'"=,(;]/)(?!/)(?:[^\s'"`;&|<>(),$]|\$\([A-Za-z_][A-Za-z0-9_]*\)|\$\{[^\s'"`}]*\}|\$(?![({]))*""")


_REMEMBERED = 256  # entries of each table of texts seen, before it starts again (memory stays flat)
_PATHS_OF: dict[str, tuple[str, ...]] = {}  # text -> its paths: env values and commands repeat


def path_values(text: str) -> list[str]:
    """The absolute paths a command line, a script or an env value names, in order, once each."""
    known = _PATHS_OF.get(text)
    if known is not None:
        return list(known)
    found: list[str] = []
    if "/" in text:
        for match in _PATH_RE.finditer(" " + text):
            path = match.group(0).rstrip(".:")
            if len(path) > 1 and path not in found:
                found.append(path)
    if len(text) <= 4096:  # bounded, whatever the input
        if len(_PATHS_OF) >= _REMEMBERED:
            _PATHS_OF.clear()
        _PATHS_OF[text] = tuple(found)
    return found



def remember(table: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(table) >= _REMEMBERED:
        table.clear()
    table[key] = value
    return value



# What ViewContext.command gives: the variables set (their values as env text), the launchers, the
# words (None when unread) and the backend chosen.
Command = tuple[tuple[tuple[str, str | None], ...], tuple[str, ...], tuple[str, ...] | None, str | None]

"""Render a kustomization as `kubectl kustomize` (or `kustomize build`) prints it, with origin
annotations, without touching the user's files.

The renderer runs on a temporary kustomization in a private scratch folder that names the
user's folder by a relative path (kustomize refuses an absolute one) and sets
`buildMetadata: [originAnnotations]`. It runs without a shell, with a timeout and a minimal
environment (proxies pointed at a closed port: nothing is fetched), and without the flags that
let kustomize run programs (`--enable-helm`, `--enable-alpha-plugins`, `--enable-exec`).
Remote bases are refused before anything runs. Every failure is one `KustomizeError`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kubegap_lint.core.errors import KubegapError
from kubegap_lint.core.record import record
from kubegap_lint.kustomize.origin import Origin, strip_origins

if TYPE_CHECKING:
    from kubegap_lint.kustomize.tree import Closure

RENDER_TIMEOUT = 120.0  # seconds; the largest real tree here renders in under one
_NO_PROXY = "http://127.0.0.1:9"  # the discard port: a fetch kustomize would try fails at once


class KustomizeError(KubegapError):
    """The kustomization could not be rendered: one line, with where when it is known."""

    def __init__(self, message: str, path: str | None = None, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column


class KustomizeMissing(KustomizeError):
    pass


@record(frozen=True)
class Renderer:
    """The command that renders a folder: `kubectl kustomize DIR` or `kustomize build DIR`."""

    executable: str
    build: tuple[str, ...]

    def command(self, folder: str) -> list[str]:
        return [self.executable, *self.build, folder]


def find_renderer(explicit: str | None = None) -> Renderer:
    """`--kustomize PATH` (a kubectl or a kustomize binary, by its name), else `kustomize` on
    PATH, else `kubectl` on PATH."""
    import shutil

    if explicit:
        path = explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else shutil.which(explicit)
        if path is None:
            raise KustomizeMissing(f"no renderer at {explicit}: name a kubectl or kustomize binary with --kustomize PATH")
        return _renderer(path)
    for name in ("kustomize", "kubectl"):
        path = shutil.which(name)
        if path is not None:
            return _renderer(path)
    raise KustomizeMissing("no `kustomize` or `kubectl` on PATH to render it: install one, or name it with"
                           " --kustomize PATH")


def _renderer(path: str) -> Renderer:
    name = os.path.basename(path).lower()
    return Renderer(path, ("kustomize",) if name.startswith("kubectl") else ("build",))


def _environment(scratch: str) -> dict[str, str]:
    """What the renderer sees of the environment: a home in the scratch folder (no user
    configuration, no plugin folder) and no way out to the network."""
    environment = {"HOME": scratch, "XDG_CONFIG_HOME": scratch, "KUBECONFIG": os.devnull,
                   "HTTP_PROXY": _NO_PROXY, "HTTPS_PROXY": _NO_PROXY, "http_proxy": _NO_PROXY,
                   "https_proxy": _NO_PROXY, "NO_PROXY": "", "no_proxy": "", "GIT_TERMINAL_PROMPT": "0",
                   "LANG": "C", "LC_ALL": "C"}
    for name in ("PATH", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP"):
        if name in os.environ:
            environment[name] = os.environ[name]
    return environment


def refuse_remote(chain: Closure) -> None:
    """A remote base is refused at the line that names it: rendering it would fetch it."""
    if chain.remote is not None:
        kustomization, entry = chain.remote
        raise KustomizeError(f"names a remote base ({entry.value}): kubegap-lint never fetches over the network;"
                             " render it yourself and pipe the output (`kubectl kustomize DIR | kubegap-lint -`)",
                             kustomization.path, entry.line, entry.column)


def refuse_outside(chain: Closure, folder: str) -> None:
    """A path that leads out of the repository (git's top level of the folder, else the current
    folder when the folder is below it) is refused at the line that names it: a planted
    kustomization must not make the render read the machine's other files."""
    from kubegap_lint.input.git import top_level
    from kubegap_lint.kustomize.tree import outside

    top = top_level(folder)
    if top is None:
        here = os.path.realpath(os.curdir)
        real = os.path.realpath(folder)
        if real != here and not real.startswith(here.rstrip(os.sep) + os.sep):
            return  # a folder named outside any repository and the current folder: its own choice
        top = here
    found = outside(chain, top)
    if found is not None:
        value, path, line, column = found
        raise KustomizeError(f"names {value}, outside the repository ({top}): kubegap-lint does not render"
                             " kustomizations that read files outside it", path, line, column)


def render(renderer: Renderer, folder: str, scratch: str, timeout: float = RENDER_TIMEOUT) -> tuple[str, dict[int, Origin]]:
    """The rendered stream of `folder` (origin annotations removed) and each document's origin,
    its path made absolute."""
    import subprocess
    import tempfile

    here = tempfile.mkdtemp(prefix="kustomize-", dir=scratch)
    relative = os.path.relpath(os.path.abspath(folder), here)
    if os.path.isabs(relative) or relative.startswith(os.sep):
        raise KustomizeError("cannot be rendered from the scratch folder (another drive)")
    with open(os.path.join(here, "kustomization.yaml"), "w", encoding="utf-8", newline="\n") as handle:
        handle.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
                     f"- {_quoted(relative.replace(os.sep, '/'))}\nbuildMetadata: [originAnnotations]\n")
    command = renderer.command(here)
    shown = " ".join((os.path.basename(renderer.executable), *renderer.build))
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              env=_environment(here), cwd=here)
    except FileNotFoundError:
        raise KustomizeMissing(f"no renderer at {renderer.executable}") from None
    except subprocess.TimeoutExpired:
        raise KustomizeError(f"{shown} did not finish in {timeout:.0f} s") from None
    except OSError as exc:
        raise KustomizeError(f"{shown} could not be run: {exc.strerror or exc}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        said = _said(lines).replace(here + os.sep, "").replace(here, "<scratch>")
        raise KustomizeError(f"{shown} failed (exit {done.returncode})" + (f": {_shortened(said)}" if said else ""))
    text, origins = strip_origins(done.stdout.decode("utf-8", "replace"))
    absolute = {number: Origin(_absolute(here, o.path), _absolute(here, o.configured_in), o.configured_by)
                for number, o in origins.items()}
    return text, absolute


def _said(lines: list[str]) -> str:
    """The renderer's own words: kustomize's `Error: ...`, or the last `err="..."` of kubectl's log."""
    for line in lines:
        if line.lower().startswith("error:"):
            return line
    for number in range(len(lines) - 1, -1, -1):
        line = lines[number]
        if 'err="' in line:
            return line.split('err="', 1)[1].rstrip('"')
        if line.endswith("err=<"):  # klog's multi-line form: the lines up to a lone `>`
            body = []
            for following in lines[number + 1:]:
                if following == ">" or following.startswith(">"):
                    break
                body.append(following)
            return " ".join(body)
    return lines[-1] if lines else ""


def _shortened(text: str, keep: int = 240) -> str:
    """A nested kustomize error, its start and its end (the file that failed is named last)."""
    return text if len(text) <= 2 * keep + 5 else f"{text[:keep]} ... {text[-keep:]}"


def _absolute(base: str, path: str | None) -> str | None:
    return None if path is None else os.path.normpath(os.path.join(base, path))


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'

"""Render charts in one child process per run, with a time and a memory limit.

The Helm engine is Go code loaded into Python: a template that loops for ever cannot be
stopped in-process, Ctrl-C waits for it, and a Go-runtime abort (a panic, out of memory) ends
the whole process with no report. So the engine runs in a child started at the first chart
(`kubegap-lint helm` starts it first thing, so that it loads while the settings are read) and
reused for the rest (starting one costs about 0.3 s and 70 MB), speaking JSON lines over pipes.
The child limits its own address space (RLIMIT_AS) and CPU time (RLIMIT_CPU) where the platform
has them; the parent waits at most the render timeout, and Ctrl-C or SIGTERM stop the wait at
once. A child that dies, hangs or goes over a limit is killed, its chart gets one error, and the
next chart starts a new child. What the engine logs on its standard error (Helm's `INFO found
symbolic link ...`) is passed on prefixed `kubegap-lint: helm:`, with the chart's path as the
user named it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from kubegap_lint.helm.render import HelmError, HelmMissing, NotLinted, RenderOptions, RequestError

if TYPE_CHECKING:  # imported where used: `start` runs before anything else (cli/entry.py)
    from kubegap_lint.helm.dependencies import MissingSubchart

DEFAULT_TIMEOUT = 60.0  # seconds of wall time for one chart's render (--render-timeout)
MEMORY_LIMIT = 2 * 1024 * 1024 * 1024  # the child's address space: Go reserves ~700 MB at start
MAX_REPLY = 256 * 1024 * 1024  # bytes of one render's answer: a chart printing more is refused
MAX_LOG_LINES = 20  # engine log lines passed on per render; the rest are counted
MAX_LINE = 500  # characters of one engine log line passed on
_FIELDS = ("values", "sets", "release", "namespace", "set_strings", "set_files", "kube_version",
           "api_versions", "include_crds", "set_jsons", "set_literals")

_settings: dict[str, float] = {"timeout": DEFAULT_TIMEOUT}
_given: dict[str, float] = {}


_UNSET: Any = object()


def configure(command_line: float | None = _UNSET, config: float | None = _UNSET) -> None:
    """The wall-clock limit of one render in seconds: --render-timeout, else the configuration's
    `render_timeout`, else DEFAULT_TIMEOUT. Each run names what it was given (None: nothing), so
    a limit never outlives the run that set it (the MCP and language servers run many)."""
    for source, value in (("command_line", command_line), ("config", config)):
        if value is None:
            _given.pop(source, None)
        elif value is not _UNSET:
            _given[source] = float(value)
    _settings["timeout"] = _given.get("command_line", _given.get("config", DEFAULT_TIMEOUT))


def installed() -> None:
    """HelmMissing unless the engine loads, asked of the child (which is then ready for the
    first chart): loading it here as well would cost a second 0.3 s and 70 MB."""
    _greeted(_started())


def start() -> None:
    """Start the child now and read its answer later (installed, or the first render): a
    command reads its settings while the engine loads (0.2-0.4 s of a run's wall time)."""
    _started()


class RenderStopped(HelmError):
    """The engine process died or ran out of time: not the chart's values at fault."""


class _Child:
    """The running engine process and what it wrote that is not yet read."""

    def __init__(self) -> None:
        import kubegap_lint

        top = os.path.dirname(os.path.dirname(os.path.abspath(kubegap_lint.__file__)))
        # `-c` puts the current folder first on sys.path: the repository being linted must not
        # provide a `kubegap_lint` package of its own, so our own top replaces it.
        code = (f"import sys; sys.path[0] = {top!r}; "
                "from kubegap_lint.helm.worker import serve; serve()")
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, close_fds=True)
        self.out = bytearray()  # grown in place: a render of megabytes comes in 64 KiB pieces
        self.err = b""
        self.timed_out = False
        self.too_long = False
        self.ready = False  # its first line (the engine loaded) read

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


_child: list[_Child] = []


def _stop_child() -> None:
    while _child:
        _child.pop().stop()


def _spawn() -> _Child:
    _stop_child()
    import atexit

    try:
        child = _Child()
    except OSError as exc:
        raise HelmError(f"the Helm engine process cannot be started: {exc.strerror or exc}") from None
    atexit.register(child.stop)
    _child.append(child)
    return child


def _started() -> _Child:
    """The child, started if there is none alive; its first line perhaps not read yet."""
    if _child and _child[0].process.poll() is None:
        return _child[0]
    return _spawn()


def _greeted(child: _Child) -> _Child:
    """The child once its first line says the engine loaded; HelmMissing or HelmError (it is
    stopped) when it says otherwise or dies."""
    if child.ready:
        return child
    try:
        hello = _reply(child, _settings["timeout"])  # the engine loaded, or why not
    except BaseException:
        _stop_child()
        raise
    if hello is None or "ready" not in hello:
        reason = _why_dead(child)
        _stop_child()
        if hello is not None and "missing" in hello:
            raise HelmMissing(str(hello["missing"]))
        raise HelmError(f"the Helm engine process did not start: it {reason}")
    child.ready = True
    return child


def render(chart_path: str, options: RenderOptions, missing: list[MissingSubchart] | None = None,
           shown: str | None = None, meanwhile: Callable[[], None] | None = None) -> str:
    """What `helm template` prints for the chart, rendered by the engine in the child process.
    HelmError (one line) when the chart fails, the engine aborts or time runs out; NotLinted
    for a chart that renders nothing; the enabled subcharts charts/ lacks added to `missing`.
    `meanwhile` runs once the request is sent: this process's own work, while the child loads
    the engine (the request waits in the pipe) and renders."""
    import json

    name = shown or chart_path
    full = os.path.abspath(chart_path)
    # The child outlives a run (the servers lint many, each from its folder): relative values
    # and --set-file paths are the caller's, so it renders from the caller's folder.
    request = {"chart": full, "cpu": _settings["timeout"], "cwd": os.getcwd(),
               "options": {field: getattr(options, field) for field in _FIELDS}}
    child = _started()
    try:
        assert child.process.stdin is not None
        try:
            child.process.stdin.write(json.dumps(request).encode() + b"\n")
            child.process.stdin.flush()
            sent = True
        except BrokenPipeError:  # it died: its first line, or its end, says why
            sent = False
        if meanwhile is not None:
            meanwhile()
        _greeted(child)
        reply = _reply(child, _settings["timeout"]) if sent else None
    except HelmError:
        raise  # _greeted stopped the child
    except BaseException:  # Ctrl-C, SIGTERM: the child goes with the wait
        _stop_child()
        raise
    _pass_logs(child, full, name)
    if reply is None:
        reason = _why_dead(child)
        _stop_child()
        raise RenderStopped(f"helm template {chart_path} failed: the Helm engine process {reason};"
                        " the chart was not rendered")
    if "missing" in reply:
        raise HelmMissing(str(reply["missing"]))
    if "not_linted" in reply:
        raise NotLinted(str(reply["not_linted"]))
    if "error" in reply:
        path = reply.get("path")
        raise (RequestError if reply.get("request") else HelmError)(
            str(reply["error"]).replace(full, chart_path), str(path).replace(full, chart_path) if path else None,
            reply.get("line"))
    if missing is not None:
        from kubegap_lint.helm.dependencies import MissingSubchart

        missing.extend(MissingSubchart(str(name), str(path).replace(full, chart_path), line)
                       for name, path, line in reply.get("subcharts_missing", []))
    return str(reply["text"])


def _reply(child: _Child, timeout: float) -> dict[str, Any] | None:
    """The child's answer, or None when it died or time ran out (then it is killed)."""
    import json
    import selectors

    process = child.process
    assert process.stdout is not None and process.stderr is not None
    streams: dict[int, str] = {process.stdout.fileno(): "out", process.stderr.fileno(): "err"}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for descriptor in streams:
            selector.register(descriptor, selectors.EVENT_READ)
        answered = b"\n" in child.out
        while not answered:
            left = deadline - time.monotonic()
            if left <= 0:
                child.timed_out = True
                process.kill()
                return None
            events = selector.select(left)
            for key, _ in events:
                chunk = os.read(key.fd, 65536)
                if not chunk:  # the child closed it: it has ended
                    selector.unregister(key.fd)
                    if streams[key.fd] == "out":
                        process.wait()
                        _drain(child)
                        return None
                elif streams[key.fd] == "out":
                    child.out += chunk
                    answered = answered or b"\n" in chunk
                    if len(child.out) > MAX_REPLY:
                        child.too_long = True
                        process.kill()
                        return None
                else:
                    child.err += chunk[:1_000_000 - len(child.err)]
    end = child.out.index(b"\n")
    line = bytes(child.out[:end])
    del child.out[:end + 1]
    try:
        reply: dict[str, Any] = json.loads(line)
    except ValueError:
        return None
    return reply


def _drain(child: _Child) -> None:
    """What is left on a dead child's standard error (the Go runtime's last words)."""
    stream = child.process.stderr
    if stream is not None:
        try:
            child.err += stream.read(1_000_000 - len(child.err))
        except (OSError, ValueError):
            pass


def _why_dead(child: _Child) -> str:
    if child.too_long:
        return f"printed more than {MAX_REPLY // (1024 * 1024)} MiB"
    if child.timed_out:
        return f"did not finish in {_settings['timeout']:g} s (--render-timeout)"
    code = child.process.poll()
    lines = child.err.decode("utf-8", "replace").splitlines()
    said = next((line for prefix in ("fatal error:", "panic:", "runtime:") for line in lines
                 if line.startswith(prefix)), "")
    if code is not None and code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        what = f"aborted ({name})" if -code == signal.SIGABRT else f"was killed by {name}"
        if -code == getattr(signal, "SIGXCPU", 0):
            what += f" (more than {_settings['timeout']:g} s of CPU time)"
    else:
        what = f"aborted (exit {code})"
    return f"{what}: {said}" if said else what


def _pass_logs(child: _Child, full: str, name: str) -> None:
    """The engine's own log lines of this render, prefixed, with the chart path as named; a
    dead child's traceback is not passed on (_why_dead quotes its first line)."""
    if child.process.poll() is not None:
        return
    text, child.err = child.err.decode("utf-8", "replace"), b""
    import re

    from kubegap_lint.core.escape import escape_text

    # Go's log prefix (date and time) is dropped: the same run prints the same bytes.
    lines = [re.sub(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(\.\d+)? ", "", line)
             for line in text.splitlines() if line.strip()]
    for line in lines[:MAX_LOG_LINES]:
        shown = escape_text(line.replace(full, name))[:MAX_LINE]
        print(f"kubegap-lint: helm: {shown}", file=sys.stderr)
    if len(lines) > MAX_LOG_LINES:
        print(f"kubegap-lint: helm: ({len(lines) - MAX_LOG_LINES} more lines)", file=sys.stderr)


# The child's side.


def _limit(resource_name: str, soft: int) -> None:
    try:
        import resource
    except ImportError:  # not on this platform
        return
    which = getattr(resource, resource_name, None)
    if which is None:
        return
    try:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))
    except (ValueError, OSError):
        pass


def _cpu_used() -> float:
    try:
        import resource
    except ImportError:
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _die_with(parent: int) -> None:
    """Ask the kernel to kill this child when the parent dies (Linux), so that a killed run
    leaves no engine behind."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def serve() -> None:
    """The child: read a request a line, render, answer a line. Exits when stdin closes."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    parent = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else None
    if parent is not None:
        _die_with(parent)
    _limit("RLIMIT_AS", MEMORY_LIMIT)
    _limit("RLIMIT_CORE", 0)  # an abort or SIGXCPU writes no core file (into the repository)
    # Our answers go to a descriptor of our own; anything else written on stdout (by the engine)
    # goes to stderr, where the parent reads it as a log line.
    answers: IO[bytes] = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    import json

    from kubegap_lint.helm import sdk

    try:
        sdk.engine()
        hello = {"ready": "1"}
    except HelmMissing as exc:
        hello = {"missing": str(exc)}
    answers.write(json.dumps(hello).encode() + b"\n")
    answers.flush()
    if "missing" in hello:
        return
    for line in sys.stdin.buffer:
        request = json.loads(line)
        _limit("RLIMIT_CPU", int(_cpu_used() + float(request["cpu"])) + 1)
        reply: dict[str, Any]
        try:
            os.chdir(request["cwd"])
            options = RenderOptions(**request["options"])
            missing: list[MissingSubchart] = []
            reply = {"text": sdk.render(request["chart"], options, missing),
                     "subcharts_missing": [[m.name, m.path, m.line] for m in missing]}
        except NotLinted as exc:
            reply = {"not_linted": str(exc)}
        except HelmMissing as exc:
            reply = {"missing": str(exc)}
        except HelmError as exc:
            reply = {"error": str(exc), "path": exc.path, "line": exc.line, "request": isinstance(exc, RequestError)}
        except Exception as exc:  # a bug in the engine's binding: this chart's error, not the run's
            reply = {"error": f"helm template {request['chart']} failed: the Helm engine raised"
                              f" {type(exc).__name__}: {' '.join(str(exc).split())}"}
        answers.write(json.dumps(reply).encode() + b"\n")
        answers.flush()

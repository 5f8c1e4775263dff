"""Lint a large input in worker processes, with the same result, byte for byte, as one process.

Parsing is most of the work and needs nothing but the document, so it spreads well; the facts
that cross resources (which PodDisruptionBudget selects a pod, the ConfigMaps behind `envFrom`,
DRA claims) need the whole input. Two phases therefore, over workers that keep what they parsed:

1. The parent reads every source and splits it into documents with the line scan (cheap),
   then forks the workers. Each takes a contiguous run of documents (runs are balanced by
   bytes, so one large stream is shared too, unless findings will move to chart templates,
   which rank a document among its file's), parses them, and sends back the cross-resource
   index of its part.
2. The parent merges the parts in input order into the index of the whole input, as the
   serial run would have built it, and sends it to every worker. Each builds the workload
   views of its documents against that index, evaluates the policies, and sends back its
   findings, errors and estimates, which the parent puts together in input order.

Parsed documents never cross a process boundary (pickling them and their positions would cost
more than parsing); only indexes and findings do. Inline and annotation suppressions are local to a
document and are applied in the workers. Every path, the workers' included, lints in the one
run loop (run.Linter.run); `choose_path` below is the one place that says which path runs.
tests/test_parallel.py checks that every path gives the same output.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from kubegap_lint.core.model import Finding, InputError
from kubegap_lint.core.record import fields
from kubegap_lint.engine.result import LintResult, estimate_order, tally_key
from kubegap_lint.engine.run import Linter, collector_paused, make_result
from kubegap_lint.input.read import InputFault, ReadStats, Resource, read_chunk
from kubegap_lint.input.readers import DocumentReader, Documents, ParsedReader
from kubegap_lint.input.scan import split_documents
from kubegap_lint.input.sources import Source, discover
from kubegap_lint.input.stream import source_lines
from kubegap_lint.store.spill import SortedSpill
from kubegap_lint.workloads.index import InputIndex

if TYPE_CHECKING:
    from kubegap_lint.engine.estimate import Estimate

# Below this many bytes of input, forking and shipping findings back costs more than it saves.
MIN_PARALLEL_BYTES = 1_000_000


def _can_fork() -> bool:
    import multiprocessing  # only when there may be work for it: it costs start-up time

    return "fork" in multiprocessing.get_all_start_methods()


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_Unit = Documents  # a contiguous run of one source's documents; a worker lints a list of them


def _add_stats(total: ReadStats, part: ReadStats) -> None:
    for name in fields(ReadStats):
        setattr(total, name, getattr(total, name) + getattr(part, name))


def _die_with_parent(parent: int) -> None:
    """Linux: have the kernel kill this worker when the parent dies (a killed parent left
    workers running ~10 s, holding memory); elsewhere the daemon flag and the pipe's end do."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _worker(linter: Linter, units: list[_Unit], conn: Any, parent: int) -> None:
    _die_with_parent(parent)
    try:
        parsed: list[tuple[list[Resource | InputFault], ReadStats]] = []
        parts: list[tuple[InputIndex, ReadStats]] = []
        for unit in units:
            stats = ReadStats()
            items: list[Resource | InputFault] = []
            for chunk in unit.chunks:
                items.extend(read_chunk(unit.display, chunk, stats, unit.bad_lines))
            part = InputIndex()
            for item in items:
                if isinstance(item, Resource):
                    part.add(item)
            parsed.append((items, stats))
            parts.append((part, stats))
        conn.send(("indexed", parts))
        index = conn.recv()
        # One evaluation over the whole share: its documents are contiguous in input order, so
        # errors and estimates come out in the order the serial run gives them.
        everything = [item for items, _ in parsed for item in items]
        result = linter.run(ParsedReader(everything), index=index)
        conn.send(("evaluated", [(result.findings, result.errors, result.workloads, result.estimates,
                                  list(result.iter_workloads()))]))
        result.store.close()
    except BaseException as exc:  # report and stop; the parent falls back to one process
        try:
            conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        except Exception:
            pass
    finally:
        conn.close()


class RunPath(enum.Enum):
    """The ways a `lint` runs; each ends in run.Linter.run, so they print the same bytes."""

    STREAM = "one process, reading as it goes"  # memory bounded by the largest document
    WHOLE = "one process, over the input read whole"  # read to decide; too small or judged whole
    WORKERS = "worker processes, each on a share"  # the parent merges the index and the findings


def choose_path(linter: Linter, jobs: int, size: int | None = None, shares: int | None = None) -> RunPath:
    """Which path a run takes: the one place that decides.

    - `jobs` 1: STREAM. Nothing else reads the input first, so memory grows with the largest
      document, not the input (stream.py).
    - Otherwise the parent reads the input whole (`size` bytes) to split it, then WHOLE when
      any of these holds, else WORKERS:
      - the input is under MIN_PARALLEL_BYTES: forking and shipping findings back costs more;
      - the run has configuration exemptions or a baseline, which are judged over every finding
        of the run (a baseline suppresses N findings of a fingerprint; an exemption that matched
        none is KG005), so one process must see them all;
      - the input makes fewer than two shares (`shares`), or `fork` is not available.
    - A worker that fails or dies makes the run fall back to WHOLE (in _lint_parallel).
    Called with `size` only, it answers whether shares are worth making.
    """
    if jobs <= 1:
        return RunPath.STREAM
    settings = linter.settings
    judged_whole = bool(getattr(settings, "exemptions", None)) or getattr(settings, "baseline", None) is not None
    if (size is not None and size < MIN_PARALLEL_BYTES) or judged_whole:
        return RunPath.WHOLE
    if shares is not None and (shares < 2 or not _can_fork()):
        return RunPath.WHOLE
    return RunPath.WORKERS


def _maps_to_charts(linter: Linter, units: list[_Unit]) -> bool:
    """Will findings move to chart templates? Then a file's documents stay in one share: a
    document is placed in its template by its rank among the file's documents of that template."""
    sources = {c.helm_source for u in units for c in u.chunks if c.helm_source}
    if not sources:
        return False
    from kubegap_lint.helm.mapping import ChartIndex

    charts = ChartIndex(getattr(linter.settings, "chart_dirs", ()))
    return any(charts.resolve(source) is not None for source in sorted(sources))


def _split(units: list[_Unit], jobs: int, whole_files: bool = False) -> list[list[_Unit]]:
    """Contiguous shares of the documents, in input order, of about equal bytes; with
    `whole_files`, every file's documents in the share where the file starts."""
    total = sum(len(c.text) for u in units for c in u.chunks)
    shares: list[list[_Unit]] = [[] for _ in range(jobs)]
    done = 0
    for unit in units:
        start = done
        for chunk in unit.chunks:
            share = shares[min(jobs - 1, (start if whole_files else done) * jobs // max(total, 1))]
            if share and share[-1].display == unit.display and share[-1].bad_lines is unit.bad_lines:
                share[-1].chunks.append(chunk)
            else:
                share.append(_Unit(unit.display, [chunk], unit.bad_lines))
            done += len(chunk.text)
    return [share for share in shares if share]


def lint_sources(linter: Linter, sources: list[Source], errors: list[InputError] | None = None,
                 jobs: int = 0) -> LintResult:
    """Like `Linter.lint_sources`, in `jobs` processes (0: one per CPU) when the input is large."""
    jobs = jobs or default_jobs()
    if choose_path(linter, jobs) is RunPath.STREAM:
        return linter.lint_sources(sources, errors)
    with collector_paused():  # the forked workers inherit the paused collector
        return _lint_parallel(linter, sources, list(errors or []), jobs)


def lint_paths(linter: Linter, paths: Iterable[str], jobs: int = 0) -> LintResult:
    sources, errors = discover(paths, linter.settings.exclude,
                               follow_outside=linter.settings.follow_symlinks_out)
    return lint_sources(linter, sources, errors, jobs)


def _open_source(source: Source) -> IO[bytes]:
    """A source's bytes: a regular file checked on its open descriptor, or stdin (OSError when
    it is closed)."""
    if source.fs_path is None:
        import io

        if sys.stdin is None:
            raise OSError(0, "standard input is closed")
        return io.BytesIO(sys.stdin.buffer.read())
    from kubegap_lint.core.safefile import open_regular

    return open(open_regular(source.fs_path), "rb")


def _lint_parallel(linter: Linter, sources: list[Source], errors: list[InputError], jobs: int) -> LintResult:
    stats = ReadStats()
    units: list[_Unit] = []
    size = 0
    for source in sources:
        bad_lines: list[int] = []
        try:
            # Read as the stream is (stream.source_lines): an overlong line is cut while read.
            with _open_source(source) as handle:
                chunks = list(split_documents(source_lines(handle, bad_lines)))
                size += handle.tell()
        except OSError as exc:
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
            continue
        stats.files += 1
        units.append(_Unit(source.display, chunks, sorted(bad_lines)))
    if choose_path(linter, jobs, size) is RunPath.WHOLE:
        return _serial(linter, units, errors, stats)
    shares = _split(units, jobs, whole_files=_maps_to_charts(linter, units))
    if choose_path(linter, jobs, size, len(shares)) is RunPath.WHOLE:
        return _serial(linter, units, errors, stats)
    import multiprocessing

    for table in linter.template_places.values():  # a pending marked render (helm/marked.py) is
        complete = getattr(table, "complete", None)  # made here: forked workers must not share
        if complete is not None:  # the parent's pipes to the Helm engine's process
            complete()
    context = multiprocessing.get_context("fork")
    workers = []
    try:
        for share in shares:
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_worker, args=(linter, share, child_end, os.getpid()), daemon=True)
            process.start()
            child_end.close()
            workers.append((process, parent_end))
        index = linter.new_index()
        for _, conn in workers:
            state, parts = conn.recv()
            if state != "indexed":
                return _serial(linter, units, errors, stats)
            for part, part_stats in parts:
                index.merge(part)
                _add_stats(stats, part_stats)
        for _, conn in workers:
            conn.send(index)
        # Counted as they are stored, as the serial run counts them: the summary reads no run back.
        findings: SortedSpill[Finding] = SortedSpill(Finding.sort_key, tally=tally_key)
        policy_errors = []
        workloads = 0
        estimates: SortedSpill[tuple[int, Estimate]] = SortedSpill(estimate_order)
        workload_refs: SortedSpill[tuple[int, Any]] = SortedSpill(lambda pair: pair[0])
        for _, conn in workers:
            state, results = conn.recv()
            if state != "evaluated":
                return _serial(linter, units, errors, stats)
            for unit_findings, unit_errors, unit_workloads, unit_estimates, unit_refs in results:
                findings.extend(unit_findings)
                policy_errors.extend(unit_errors)
                workloads += unit_workloads
                for found in unit_estimates:  # the workers' shares come in input order
                    estimates.add((len(estimates), found))
                for ref in unit_refs:
                    workload_refs.add((len(workload_refs), ref))
    except (EOFError, OSError):  # a worker died (killed, out of memory): do it in one process
        return _serial(linter, units, errors, stats)
    finally:
        for process, conn in workers:
            conn.close()
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
    findings.extend(linter.unlinted_findings())
    return make_result(linter, findings, errors + policy_errors, stats, workloads, [], estimates, workload_refs)


def _serial(linter: Linter, units: list[_Unit], errors: list[InputError], stats: ReadStats) -> LintResult:
    """The WHOLE path: one process over sources already read (a small input, or a worker failed)."""
    return linter.run(DocumentReader(units, stats.files), errors)

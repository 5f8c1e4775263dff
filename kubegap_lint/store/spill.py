"""A sorted store that keeps memory flat however many items a run produces.

Findings (and estimates) are produced in evaluation order but reported sorted. Holding them all
would make memory grow with the input, so `SortedSpill` keeps at most `limit` items in memory;
past that it sorts them and writes them, pickled, to an anonymous temporary file (a "run").
Iterating merges the runs in key order. Ties keep insertion order (each run is stably sorted
and `heapq.merge` prefers earlier runs), so the result is the same as one stable sort of
everything: same input, same bytes. Runs that follow each other in key order (findings arrive
in input order, so the runs of one stream mostly do) are read one after the other instead:
the same items in the same order, without a merge's step and key for each item. The files are
private to this process and deleted when closed; nothing is written next to the linted files.
Without a writable temporary folder the items simply stay in memory.
"""

from __future__ import annotations

import heapq
import itertools
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Generic, TypeVar, cast

T = TypeVar("T")

# Items held before a run is written: findings are about 1.2 KB each in memory (measured with
# tracemalloc on bench/stream_memory.py's stream), so about 12 MB.
SPILL_ITEMS = 10_000
# Runs merged at once; more are first merged into one, so open files stay few.
MAX_RUNS = 64
_BATCH = 256  # items a pickle record: fewer, larger records read back faster


class SortedSpill(Generic[T]):
    """`tally`, when given, names what each item counts as: `counts` then holds how many items
    of each were added, so a summary needs no read of the runs."""

    def __init__(self, key: Callable[[T], Any], limit: int | None = None,
                 tally: Callable[[T], Any] | None = None) -> None:
        self.key = key
        self.limit = max(1, SPILL_ITEMS if limit is None else limit)
        self.buffer: list[T] = []
        self.runs: list[IO[bytes]] = []
        self.bounds: list[tuple[Any, Any]] = []  # each run's first and last key
        self.count = 0
        self.tally = tally
        self.counts: dict[Any, int] | None = None if tally is None else {}

    def __len__(self) -> int:
        return self.count

    def add(self, item: T) -> None:
        self.buffer.append(item)
        self.count += 1
        counts = self.counts
        if counts is not None:
            kind = self.tally(item)  # type: ignore[misc]
            counts[kind] = counts.get(kind, 0) + 1
        if len(self.buffer) >= self.limit:
            self._spill()

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self.add(item)

    def _spill(self) -> None:
        buffer = self.buffer
        buffer.sort(key=self.key)
        try:
            self.runs.append(_write_run(buffer))
        except OSError:  # no writable temporary folder (or it is full): hold everything instead
            self.limit = sys.maxsize
            return
        self.bounds.append((self.key(buffer[0]), self.key(buffer[-1])))
        self.buffer = []
        if len(self.runs) >= MAX_RUNS:
            try:
                merged = _write_run(self._sorted(_read_run(run) for run in self.runs))
            except OSError:
                return  # the runs stay as they are: merged when read
            for run in self.runs:
                run.close()
            self.runs = [merged]
            self.bounds = [(min(first for first, _ in self.bounds), max(last for _, last in self.bounds))]

    def _sorted(self, sources: Iterable[Iterator[T]], bounds: list[tuple[Any, Any]] | None = None) -> Iterator[T]:
        """The sorted sources (the runs, then the buffer) as one sorted, stable sequence: one
        after the other when each one's first key is not below the last key before it (the
        order a merge gives, since it prefers earlier sources on ties), else merged."""
        bounds = self.bounds if bounds is None else bounds
        if all(not (after[0] < before[1]) for before, after in zip(bounds, bounds[1:], strict=False)):
            return itertools.chain.from_iterable(sources)
        return heapq.merge(*sources, key=self.key)

    def __iter__(self) -> Iterator[T]:
        """Every item in key order; may be called again (each call reads the runs afresh)."""
        buffer = self.buffer
        buffer.sort(key=self.key)
        if not self.runs:
            return iter(list(buffer))
        sources = [_read_run(run) for run in self.runs]
        bounds = self.bounds
        if buffer:
            sources.append(iter(list(buffer)))
            bounds = [*bounds, (self.key(buffer[0]), self.key(buffer[-1]))]
        return self._sorted(sources, bounds)

    def close(self) -> None:
        for run in self.runs:
            run.close()
        self.runs = []
        self.bounds = []
        self.buffer = []


def _write_run(items: Iterable[Any]) -> IO[bytes]:
    import pickle  # here, not at the top: most runs never spill, and start-up counts

    from kubegap_lint.core.tempdir import temporary_file

    handle = cast(IO[bytes], temporary_file())  # a private folder, or memory: never the current one
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= _BATCH:
            pickle.dump(batch, handle, protocol=pickle.HIGHEST_PROTOCOL)
            batch = []
    if batch:
        pickle.dump(batch, handle, protocol=pickle.HIGHEST_PROTOCOL)
    handle.flush()
    return handle


def _read_run(handle: IO[bytes]) -> Iterator[Any]:
    """The items of one run; reads from its own position so that runs can be read in turns."""
    import pickle

    offset = 0
    while True:
        handle.seek(offset)
        try:
            batch = pickle.load(handle)
        except EOFError:
            return
        offset = handle.tell()
        yield from batch

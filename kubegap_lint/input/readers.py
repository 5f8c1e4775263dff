"""Readers: where a run's documents come from, behind one interface (engine/run.py's loop).

A reader yields every resource and input fault of its input in input order, each with the
number of the source it came from. A reader that streams (`in_memory` false) may be asked to
read a source again, parsing only the documents `wanted` picks (stream.PendingWorkloads: the
workloads that did not fit the parsed budget); a reader whose input is in memory anyway is
never asked, because the run keeps all its workloads parsed.

- `SourceReader`: files and standard input, read block by block (the command line's `lint`,
  `baseline create`, `policies check`).
- `TextReader`: (display path, text) pairs (rendered Helm charts, tests and tools).
- `DocumentReader`: documents already split from bytes read whole (parallel.py's one-process
  path, taken after it read the input to decide).
- `ParsedReader`: items already parsed (parallel.py's workers, which parse first to build
  their part of the index).

Adding an input source: write a reader here and hand it to `Linter.run`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import IO, Protocol

from kubegap_lint.core.model import InputError
from kubegap_lint.core.record import record
from kubegap_lint.input.read import InputFault, ReadStats, Resource, read_chunk, read_lines, read_text
from kubegap_lint.input.scan import Chunk
from kubegap_lint.input.sources import Source

Item = Resource | InputFault


class Reader(Protocol):
    """What the run loop reads from."""

    # True when the whole input is in memory already: the run then keeps every workload
    # parsed and its facts in memory, and never calls read_again.
    in_memory: bool

    def read(self, stats: ReadStats, errors: list[InputError]) -> Iterator[tuple[int, Item]]:
        """Every item, in input order, with its source's number; counts into stats, and
        appends a source that cannot be read to errors."""
        ...

    def read_again(self, number: int, wanted: Callable[[int], bool],
                   errors: list[InputError]) -> Iterator[Item]:
        """Source `number` once more, parsing only the documents `wanted` accepts."""
        ...


class SourceReader:
    """Files and `-` (standard input, spooled as it is read so that it can be read again)."""

    in_memory = False

    def __init__(self, sources: list[Source]) -> None:
        from kubegap_lint.input.stream import StdinSpool

        self.sources = sources
        self.stdin = StdinSpool()
        # Per file read: what fstat said when it was opened, and the SHA-256 of the bytes read.
        # A second reading (stream.PendingWorkloads) picks documents by their number, so a file
        # that changed in between would give other documents: it must be the same file.
        self.seen: dict[int, tuple[tuple[int, ...], bytes]] = {}

    def read(self, stats: ReadStats, errors: list[InputError]) -> Iterator[tuple[int, Item]]:
        for number, source in enumerate(self.sources):
            for item in self._read_source(number, source, stats, errors):
                yield number, item

    def read_again(self, number: int, wanted: Callable[[int], bool],
                   errors: list[InputError]) -> Iterator[Item]:
        return self._read_source(number, self.sources[number], ReadStats(), errors, wanted)

    def _read_source(self, number: int, source: Source, stats: ReadStats, errors: list[InputError],
                     wanted: Callable[[int], bool] | None = None) -> Iterator[Item]:
        """The items of one source as they are read; an OS error becomes an input error, and so
        does a file that is not the same on its second reading as on its first."""
        from kubegap_lint.input.stream import source_lines

        try:
            handle = self.stdin.open() if source.fs_path is None else open(source.fs_path, "rb")
        except OSError as exc:
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
            return
        try:
            reading: IO[bytes] = handle
            if source.fs_path is not None:
                identity = _identity(handle)
                first = self.seen.get(number)
                if first is not None and first[0] != identity:
                    errors.append(InputError(source.display, CHANGED))
                    return
                reading = _Digesting(handle)  # type: ignore[assignment]  # reads like a file
            stats.files += 1
            bad_lines: list[int] = []
            yield from read_lines(source.display, source_lines(reading, bad_lines), stats, bad_lines, wanted)
            if isinstance(reading, _Digesting):
                digest = reading.digest.digest()
                if first is None:
                    self.seen[number] = (identity, digest)
                elif first[1] != digest:  # changed within fstat's resolution, or while read
                    errors.append(InputError(source.display, CHANGED))
        except OSError as exc:  # e.g. a read error half-way, or a folder that replaced the file
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
        finally:
            handle.close()


CHANGED = ("changed while it was being linted (its two readings differ), so its findings may be"
           " wrong or missing; lint it again")


def _identity(handle: IO[bytes]) -> tuple[int, ...]:
    import os

    status = os.fstat(handle.fileno())
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


class _Digesting:
    """A file whose bytes are hashed as they are read."""

    def __init__(self, handle: IO[bytes]) -> None:
        import os

        from kubegap_lint.core.digest import sha256

        self.handle = handle
        self.digest = sha256(size=os.fstat(handle.fileno()).st_size)  # a small file: no OpenSSL start

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.digest.update(data)
        return data

    def close(self) -> None:
        self.handle.close()


class _InMemory:
    in_memory = True

    def read_again(self, number: int, wanted: Callable[[int], bool],
                   errors: list[InputError]) -> Iterator[Item]:
        raise AssertionError("an in-memory input keeps its workloads parsed; it is never read again")


class TextReader(_InMemory):
    """(display path, text) pairs, each one file."""

    def __init__(self, texts: Iterable[tuple[str, str]]) -> None:
        self.texts = texts

    def read(self, stats: ReadStats, errors: list[InputError]) -> Iterator[tuple[int, Item]]:
        for number, (path, text) in enumerate(self.texts):
            stats.files += 1
            for item in read_text(path, text, stats):
                yield number, item


@record
class Documents:
    """A contiguous run of one source's documents (split by scan.split_documents), with the
    lines of the source that were not UTF-8."""

    display: str
    chunks: list[Chunk]
    bad_lines: list[int]


class DocumentReader(_InMemory):
    """Documents already split; `files` is how many files were read to get them."""

    def __init__(self, units: list[Documents], files: int) -> None:
        self.units = units
        self.files = files

    def read(self, stats: ReadStats, errors: list[InputError]) -> Iterator[tuple[int, Item]]:
        stats.files += self.files
        for number, unit in enumerate(self.units):
            for chunk in unit.chunks:
                for item in read_chunk(unit.display, chunk, stats, unit.bad_lines):
                    yield number, item


class ParsedReader(_InMemory):
    """Items parsed already, in input order (their reading was counted where it happened)."""

    def __init__(self, items: list[Item]) -> None:
        self.items = items

    def read(self, stats: ReadStats, errors: list[InputError]) -> Iterator[tuple[int, Item]]:
        for item in self.items:
            yield 0, item

"""Readers: where a run's documents come from, behind one interface (engine/run.py's loop).

A reader yields every resource and input fault of its input in input order, each with the
number of the source it came from. Each source is read once: workloads that wait for the
whole input's index past the parsed budget are spilled as plain data (stream.PendingWorkloads),
never read again from their source.

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

from collections.abc import Iterable, Iterator
from typing import IO, Protocol

from kubegap_lint.core.model import InputError
from kubegap_lint.core.record import record
from kubegap_lint.input.read import InputFault, ReadStats, Resource, read_chunk, read_text, read_texts
from kubegap_lint.input.scan import Chunk
from kubegap_lint.input.sources import Source

Item = Resource | InputFault


class Reader(Protocol):
    """What the run loop reads from."""

    # True when the whole input is in memory already: the run then keeps every workload
    # parsed and its facts in memory.
    in_memory: bool

    def read(self, stats: ReadStats, errors: list[InputError]) -> Iterator[tuple[int, Item]]:
        """Every item, in input order, with its source's number; counts into stats, and
        appends a source that cannot be read to errors."""
        ...


class SourceReader:
    """Files and `-` (standard input), read block by block, once."""

    in_memory = False

    def __init__(self, sources: list[Source]) -> None:
        self.sources = sources

    def read(self, stats: ReadStats, errors: list[InputError]) -> Iterator[tuple[int, Item]]:
        for number, source in enumerate(self.sources):
            for item in self._read_source(source, stats, errors):
                yield number, item

    def _read_source(self, source: Source, stats: ReadStats, errors: list[InputError]) -> Iterator[Item]:
        """The items of one source as they are read; an OS error becomes an input error."""

        from kubegap_lint.input.stream import source_texts

        try:
            handle: IO[bytes] = _stdin() if source.fs_path is None else _open_regular(source.fs_path)
        except OSError as exc:
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
            return
        try:
            stats.files += 1
            bad_lines: list[int] = []
            yield from read_texts(source.display, source_texts(handle, bad_lines), stats, bad_lines)
        except OSError as exc:  # e.g. a read error half-way, or a folder that replaced the file
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
        finally:
            if source.fs_path is not None:
                handle.close()


def _stdin() -> IO[bytes]:
    """Standard input's bytes; an OSError when it is closed (`kubegap-lint - <&-`)."""
    import sys

    if sys.stdin is None or not hasattr(sys.stdin, "buffer"):
        raise OSError(0, "standard input is closed")
    return sys.stdin.buffer


def _open_regular(path: str) -> IO[bytes]:
    """The file, checked on its open descriptor: discovery saw a regular file, but the path may
    have become a FIFO or `/dev/zero` since (UnsafeFile, an OSError)."""
    from kubegap_lint.core.safefile import open_regular

    return open(open_regular(path), "rb")


class _InMemory:
    in_memory = True


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

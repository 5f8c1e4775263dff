"""Read inputs as streams, so that memory grows with the largest document, not the input.

`source_lines` decodes a file block by block into lines. `PendingWorkloads` holds the
workloads of a run until every cross-resource fact is known (a PodDisruptionBudget further on
may select a workload met early): up to a budget it keeps them parsed; past it, only where they
are, and they are read again from their source at the end. Standard input is copied to a
spooled temporary file (memory, then disk) as it is read, so that it can be read again.
"""

from __future__ import annotations

import bisect
import sys
from array import array
from collections.abc import Callable, Iterator
from typing import IO, Any

from kubegap_lint.input.text import BOMS, decode, split_lines

BLOCK_BYTES = 1 << 20
# Workloads kept parsed until the end of a run, counted in characters of their documents'
# text. Past it, the rest are read again at the end (their documents parsed a second time).
# Measured with bench/stream_memory.py on 10 MB: peak 58 MiB with no budget, 71 MiB with
# 1 Mi characters, 149 MiB with 4 Mi. 1 Mi holds the workloads of most repositories, so
# they are read once.
RETAIN_CHARS = 1024 * 1024
STDIN_SPOOL_BYTES = 16 * 1024 * 1024


def source_lines(handle: IO[bytes], bad_lines: list[int]) -> Iterator[str]:
    """The decoded lines of a byte stream, with their ends; lines holding bytes that are not
    UTF-8 are appended (1-based, ascending) to bad_lines as they are met."""
    head = handle.read(4)
    for bom, encoding in BOMS:
        if head.startswith(bom) and encoding != "utf-8":
            # UTF-16 and UTF-32 files are rare and small: decode them whole.
            text, bad = decode(head + handle.read())
            bad_lines.extend(bad)
            yield from split_lines(text)
            return
    if head.startswith(BOMS[2][0]):
        head = head[3:]
    line_no = 0
    carry = head
    while True:
        block = handle.read(BLOCK_BYTES)
        data = carry + block
        if block:
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line end yet: keep reading (one line is one line, however long)
                carry = data
                continue
            data, carry = data[:cut], data[cut:]
        elif not data:
            return
        try:
            lines = split_lines(data.decode("utf-8"))
        except UnicodeDecodeError:
            lines = []
            for raw in data.splitlines(True):  # bytes split at \n, \r\n and \r only
                try:
                    lines.extend(split_lines(raw.decode("utf-8")))
                except UnicodeDecodeError:
                    bad_lines.append(line_no + len(lines) + 1)
                    lines.extend(split_lines(raw.decode("utf-8", errors="replace")))
        line_no += len(lines)
        yield from lines
        if not block:
            return


class StdinSpool:
    """Standard input, copied as it is read so that a second pass can read it again."""

    def __init__(self) -> None:
        self.spool: Any = None

    def open(self) -> IO[bytes]:
        if self.spool is None:
            import tempfile  # stdin only: a run on files never needs it

            from kubegap_lint.core.tempdir import private_temp_dir

            folder = private_temp_dir()  # None: no private temp folder, so all of it in memory
            self.spool = tempfile.SpooledTemporaryFile(max_size=STDIN_SPOOL_BYTES if folder else 0, dir=folder)
            return _Tee(sys.stdin.buffer, self.spool)  # type: ignore[return-value]  # reads like a file
        self.spool.seek(0)
        return self.spool  # type: ignore[no-any-return]


class _Tee:
    def __init__(self, source: IO[bytes], copy: Any) -> None:
        self.source = source
        self.copy = copy

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size)
        self.copy.write(data)
        return data

    def close(self) -> None:
        pass


class PendingWorkloads:
    """Workloads waiting for the whole input's index, in input order.

    Workloads are kept parsed while their text fits the budget. From the first one that does
    not fit, none is kept: what is remembered is where that one is (source number, document,
    List item) and, per source, the numbers of the documents that hold the rest, in a compact
    array (8 bytes a document). The second reading parses those documents only, and evaluates
    their workloads in the same order as the first reading met them.
    """

    def __init__(self, budget: int = RETAIN_CHARS) -> None:
        self.budget = budget
        self.kept_chars = 0
        self.kept: list[tuple[int, Any]] = []
        self.resume: tuple[int, int, int] | None = None  # the first workload not kept
        self.documents: dict[int, array[int]] = {}  # source number -> its documents to read again

    def add(self, source_number: int, document: int, item: int | None, chars: int, value: Any) -> bool:
        """Queue a workload; True when it is kept parsed, False when it will be read again."""
        if self.resume is None and self.kept_chars + chars <= self.budget:
            self.kept_chars += chars
            self.kept.append((len(self.kept), value))
            return True
        if self.resume is None:
            self.resume = (source_number, document, -1 if item is None else item)
        documents = self.documents.setdefault(source_number, array("q"))
        if not documents or documents[-1] != document:  # the items of one List: one document
            documents.append(document)
        return False

    def wanted(self, source_number: int) -> Callable[[int], bool]:
        """Does the second reading of this source parse document n?"""
        documents = self.documents.get(source_number, array("q"))

        def wanted(document: int) -> bool:
            position = bisect.bisect_left(documents, document)
            return position < len(documents) and documents[position] == document

        return wanted

    def to_read_again(self, source_number: int, document: int, item: int | None) -> bool:
        """Is this workload one the first reading did not keep?"""
        return self.resume is not None and (source_number, document, -1 if item is None else item) >= self.resume

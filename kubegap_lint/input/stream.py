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

from kubegap_lint.input.limits import MAX_DOCUMENT_CHARS
from kubegap_lint.input.text import BOMS, split_lines

BLOCK_BYTES = 1 << 20
# Workloads kept parsed until the end of a run, counted in characters of their documents'
# text. Past it, the rest are read again at the end (their documents parsed a second time).
# Measured with bench/stream_memory.py on 10 MB: peak 58 MiB with no budget, 71 MiB with
# 1 Mi characters, 149 MiB with 4 Mi. 1 Mi holds the workloads of most repositories, so
# they are read once.
RETAIN_CHARS = 1024 * 1024
STDIN_SPOOL_BYTES = 16 * 1024 * 1024


def source_lines(handle: IO[bytes], bad_lines: list[int], max_line_chars: int | None = None) -> Iterator[str]:
    """The decoded lines of a byte stream, with their ends; lines holding bytes that are not
    UTF-8 are appended (1-based, ascending) to bad_lines as they are met.

    A line is never longer than max_line_chars (default limits.MAX_DOCUMENT_CHARS) plus one
    block: past that its document is too large anyway (scan.py drops its text), so only its
    first part is kept, as one line, and the rest up to its end is read and dropped. Time stays
    linear and memory bounded whatever the line length (a 2 GB file with no line end)."""
    limit = MAX_DOCUMENT_CHARS if max_line_chars is None else max_line_chars
    head = handle.read(4)
    for bom, encoding in BOMS:
        if head.startswith(bom) and encoding != "utf-8":
            handle = _Transcoded(handle, encoding, head[len(bom):])  # type: ignore[assignment]
            head = b""
            break
    if head.startswith(BOMS[2][0]):
        head = head[3:]
    line_no = 0
    pending: list[bytes] = []  # the bytes of the line not ended yet, in blocks (joined once: linear)
    pending_chars = 0
    while True:
        block = head + handle.read(BLOCK_BYTES)
        head = b""
        if not block:
            lines = _decoded_lines(b"".join(pending), line_no, bad_lines)
            yield from lines
            return
        cut = _last_line_end(block)
        if cut == 0:  # no line end yet: keep the block, up to the limit
            if pending and pending[-1].endswith(b"\r"):  # that \r ended a line after all
                lines = _decoded_lines(b"".join(pending), line_no, bad_lines)
                line_no += len(lines)
                yield from lines
                pending, pending_chars = [], 0
            pending.append(block)
            pending_chars += _chars(block)
            if pending_chars > limit:
                joined, pending = b"".join(pending), []
                lines = _decoded_lines(_whole_chars(joined), line_no, bad_lines)
                del joined
                if lines and not lines[-1].endswith(("\n", "\r")):
                    lines[-1] += "\n"
                line_no += len(lines)
                yield from lines
                del lines
                head = _skip_line(handle)  # what follows the line: read with the next block
                pending_chars = 0
            continue
        lines = _decoded_lines(b"".join(pending) + block[:cut], line_no, bad_lines)
        pending = [block[cut:]]
        pending_chars = _chars(pending[0])
        line_no += len(lines)
        yield from lines


_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that continue a character


def _chars(data: bytes) -> int:
    """How many characters UTF-8 bytes hold (exact for valid UTF-8), at C speed."""
    return len(data.translate(None, _CONTINUATION))


def _last_line_end(block: bytes) -> int:
    """Where the block's last complete line ends (0: none). A \r as its last byte may be
    half of a \r\n, so it waits for the next block."""
    return max(block.rfind(b"\n"), block.rfind(b"\r", 0, len(block) - 1)) + 1


def _whole_chars(data: bytes) -> bytes:
    """Data cut before a character that the cut of a long line may have split."""
    end = len(data)
    at = end - 1
    while at >= 0 and end - at < 4 and 0x80 <= data[at] < 0xC0:
        at -= 1
    return data[:at] if at >= 0 and data[at] >= 0xC0 else data


def _skip_line(handle: IO[bytes]) -> bytes:
    """Read up to the end of the current line and drop it; the bytes after that end."""
    while True:
        block = handle.read(BLOCK_BYTES)
        if not block:
            return b""
        ends = [at for at in (block.find(b"\n"), block.find(b"\r")) if at >= 0]
        if not ends:
            continue
        at = min(ends)
        if block[at] == 0x0D:  # \r: a \r\n is one line end, also across two blocks
            if at + 1 == len(block):
                after = handle.read(BLOCK_BYTES)
                return after[1:] if after.startswith(b"\n") else after
            if block[at + 1] == 0x0A:
                at += 1
        return block[at + 1:]


def _decoded_lines(data: bytes, line_no: int, bad_lines: list[int]) -> list[str]:
    """The lines of data (complete lines, or the end of the stream) that start after line_no."""
    try:
        return split_lines(data.decode("utf-8"))
    except UnicodeDecodeError:
        lines: list[str] = []
        for raw in data.splitlines(True):  # bytes split at \n, \r\n and \r only
            try:
                lines.extend(split_lines(raw.decode("utf-8")))
            except UnicodeDecodeError:
                bad_lines.append(line_no + len(lines) + 1)
                lines.extend(split_lines(raw.decode("utf-8", errors="replace")))
        return lines


def _not_text(error: UnicodeError) -> tuple[str, int]:
    """A lone surrogate for what does not decode: UTF-8 cannot encode it strictly."""
    return "\udc80", error.end  # type: ignore[attr-defined]


class _Transcoded:
    """A UTF-16 or UTF-32 stream read as UTF-8, block by block (rare files, but no reason to
    read them whole). A sequence that does not decode becomes bytes that are not UTF-8, so its
    line is reported as such."""

    def __init__(self, handle: IO[bytes], encoding: str, start: bytes) -> None:
        import codecs

        self.handle = handle
        codecs.register_error("kubegap-lint-not-text", _not_text)
        self.decoder = codecs.getincrementaldecoder(encoding)("kubegap-lint-not-text")
        self.start = start
        self.done = False

    def read(self, size: int) -> bytes:
        while not self.done:
            raw, self.start = self.start + self.handle.read(size), b""
            self.done = not raw
            text = self.decoder.decode(raw, final=self.done)
            if text:
                return text.encode("utf-8", "surrogatepass")
        return b""

    def close(self) -> None:
        self.handle.close()


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

"""Read inputs as streams, so that memory grows with the largest document, not the input.

`source_lines` decodes a file block by block into lines. `PendingWorkloads` holds the
workloads of a run until every cross-resource fact is known (a PodDisruptionBudget further on
may select a workload met early): up to a budget it keeps them parsed; past it, it spills them
as plain data to a private temporary file and reads them back at the end. Every source is
read once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from kubegap_lint.core.model import Position
from kubegap_lint.input.limits import MAX_DOCUMENT_CHARS
from kubegap_lint.input.parse import PositionIndex
from kubegap_lint.input.read import Resource
from kubegap_lint.input.text import BOMS, line_count, normal_text, split_lines

if TYPE_CHECKING:
    from kubegap_lint.store.records import RecordSpill

# Read a file this much at a time. 64 KiB splits into lines as fast as 1 MiB (faster, in
# the processor's cache) and holds 2-3 MiB less at once (its decoded lines, ~90 bytes each).
BLOCK_BYTES = 1 << 16
# Workloads kept parsed until the end of a run, counted in characters of their documents'
# text. Past it, the rest are spilled as plain data and read back at the end (a fifth of the
# cost of parsing them again). Small, so memory stays low (1k stream: peak ~36 MB with this
# budget, ~50 MB with 1 Mi characters), yet a run of a few workloads never serialises any.
RETAIN_CHARS = 64 * 1024


def source_lines(handle: IO[bytes], bad_lines: list[int], max_line_chars: int | None = None) -> Iterator[str]:
    """The decoded lines of a byte stream, with their ends; lines holding bytes that are not
    UTF-8 are appended (1-based, ascending) to bad_lines as they are met.

    A line is never longer than max_line_chars (default limits.MAX_DOCUMENT_CHARS) plus one
    block: past that its document is too large anyway (scan.py drops its text), so only its
    first part is kept, as one line, and the rest up to its end is read and dropped. Time stays
    linear and memory bounded whatever the line length (a 2 GB file with no line end)."""
    for text in source_texts(handle, bad_lines, max_line_chars):
        yield from split_lines(text)


def source_texts(handle: IO[bytes], bad_lines: list[int], max_line_chars: int | None = None) -> Iterator[str]:
    """source_lines, joined into pieces of whole lines as they are read (text.normal_text: lines
    end only at \\n, \\r\\n and \\r), for scan.split_texts: no str for each line."""
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
            text = _decoded_text(b"".join(pending), line_no, bad_lines)
            if text:
                yield text
            return
        cut = _last_line_end(block)
        if cut == 0:  # no line end yet: keep the block, up to the limit
            if pending and pending[-1].endswith(b"\r"):  # that \r ended a line after all
                text = _decoded_text(b"".join(pending), line_no, bad_lines)
                line_no += line_count(text)
                yield text
                pending, pending_chars = [], 0
            pending.append(block)
            pending_chars += _chars(block)
            if pending_chars > limit:
                joined, pending = b"".join(pending), []
                text = _decoded_text(_whole_chars(joined), line_no, bad_lines)
                del joined
                if text and not text.endswith(("\n", "\r")):
                    text += "\n"
                line_no += line_count(text)
                yield text
                del text
                head = _skip_line(handle)  # what follows the line: read with the next block
                pending_chars = 0
            continue
        text = _decoded_text(b"".join(pending) + block[:cut], line_no, bad_lines)
        pending = [block[cut:]]
        pending_chars = _chars(pending[0])
        line_no += line_count(text)
        yield text


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


def _decoded_text(data: bytes, line_no: int, bad_lines: list[int]) -> str:
    """The text of data (complete lines, or the end of the stream) that starts after line_no."""
    try:
        return normal_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        lines: list[str] = []
        for raw in data.splitlines(True):  # bytes split at \n, \r\n and \r only
            try:
                lines.extend(split_lines(raw.decode("utf-8")))
            except UnicodeDecodeError:
                bad_lines.append(line_no + len(lines) + 1)
                lines.extend(split_lines(raw.decode("utf-8", errors="replace")))
        return "".join(lines)


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


class PendingWorkloads:
    """Workloads waiting for the whole input's index, in input order.

    Workloads are kept parsed while their text fits the budget. From the first one that does
    not fit, none is kept: each is written as plain data to a spill (store/records.py:
    marshal, in a private anonymous temporary file, or in memory without one) as soon as it
    is read, and read back in the same order once the index is complete. A List's items share
    their document's positions and comments, written once with the first item spilled.
    """

    def __init__(self, budget: int = RETAIN_CHARS) -> None:
        self.budget = budget
        self.kept_chars = 0
        self.kept: list[tuple[Resource, Any]] = []
        self.spill: RecordSpill | None = None  # made at the first workload past the budget
        self.rules: list[Any] = []  # the distinct rules of spilled workloads, by number
        self._rule_numbers: dict[int, int] = {}  # id(rule) -> its number (self.rules keeps it alive)
        self._last: Resource | None = None  # the last workload spilled: its document's part is known

    def __len__(self) -> int:
        return len(self.kept) + (len(self.spill) if self.spill is not None else 0)

    def add(self, resource: Resource, rule: Any) -> bool:
        """Queue a workload with its kind rule; True when it is kept parsed, False when spilled."""
        if self.spill is None:
            if self.kept_chars + resource.chars <= self.budget:
                self.kept_chars += resource.chars
                self.kept.append((resource, rule))
                return True
            from kubegap_lint.store.records import RecordSpill

            self.spill = RecordSpill()
        number = self._rule_numbers.get(id(rule))
        if number is None:
            number = self._rule_numbers[id(rule)] = len(self.rules)
            self.rules.append(rule)
        last, self._last = self._last, resource
        same_document = (last is not None and last.positions is resource.positions
                         and last.document_index == resource.document_index and last.path == resource.path)
        self.spill.add((None if same_document else _document_record(resource), _item_record(resource), number))
        return False

    def __iter__(self) -> Iterator[tuple[Resource, Any]]:
        """Every workload with its rule, in the order added; each is given once (the kept ones
        are let go as they are given, and the spill is closed at the end)."""
        kept, self.kept = self.kept, []
        kept.reverse()
        while kept:
            yield kept.pop()
        if self.spill is None:
            return
        document: tuple[Any, ...] | None = None
        try:
            for document_part, item_part, number in self.spill:
                if document_part is not None:
                    document = _document_from_record(document_part)
                assert document is not None  # the first record spilled always holds its document
                yield _resource_from_records(document, item_part), self.rules[number]
        finally:
            self.close()

    def close(self) -> None:
        self.kept = []
        if self.spill is not None:
            self.spill.close()
            self.spill = None


# A spilled workload is plain data: its document's part (shared by a List's items) and its own.
def _document_record(resource: Resource) -> tuple[Any, ...]:
    positions: Any = resource.positions
    if type(positions) is PositionIndex:  # its state as plain data: a list of keys, bytes, an int, a bool
        positions = positions.to_record()
    return (resource.path, resource.document_index, positions, resource.helm_source, resource.comments,
            resource.chars)


def _item_record(resource: Resource) -> tuple[Any, ...]:
    return (resource.data, resource.start.line, resource.start.column, resource.item_index, resource.item_path)


def _document_from_record(record: tuple[Any, ...]) -> tuple[Any, ...]:
    path, document_index, positions, helm_source, comments, chars = record
    if type(positions) is tuple:
        positions = PositionIndex.from_record(positions)
    return (path, document_index, positions, helm_source, comments, chars)


def _resource_from_records(document: tuple[Any, ...], item: tuple[Any, ...]) -> Resource:
    path, document_index, positions, helm_source, comments, chars = document
    data, line, column, item_index, item_path = item
    return Resource(path, document_index, data, positions, Position(line, column), helm_source, comments,
                    item_index, chars, item_path)

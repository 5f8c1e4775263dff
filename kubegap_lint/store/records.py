"""An append-only store of plain records, read back once in the order they were added.

A streaming run keeps its workloads waiting until the whole input has been indexed
(input/stream.PendingWorkloads). Past a small budget, each waiting workload is written here as
plain data (dicts, lists, tuples, str, int, float, bool, None) with the standard library's
`marshal`, which writes and reads such data several times faster than the YAML it came from
can be parsed, and in a few times fewer bytes than the parsed objects take in memory.

Where the bytes go: an anonymous temporary file (already unlinked) in this run's private
folder (core/tempdir.py: mode 0700, made for this run, never the current folder). Only this
process holds the file's descriptor and only it reads the file, from offsets it wrote itself,
once, in the same run: `marshal.loads` (not safe on bytes someone else could have made) never
reads anything another process or an input could have planted. An input decides only the
values inside the records, never their types (marshal writes no code here: only plain data).

Without a private temporary folder, or once writing to it fails (a full disk), the serial
bytes stay in memory: still several times smaller than the parsed objects. A record marshal
cannot write (a type it does not know, nesting past its depth limit) is held as it is, in its
place in the order: never lost, never a crash.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Serial bytes gathered before they are written: few, large writes (and the exact count of
# what reached the file when a write fails).
WRITE_BYTES = 256 * 1024
READ_BYTES = 256 * 1024
_HEADER = 4  # each frame: its length (little-endian), then the marshal bytes; 0: a held record
_MAX_FRAME = (1 << 32) - 1


class RecordSpill:
    def __init__(self) -> None:
        self.file: Any = None  # unbuffered, opened at the first record
        self.on_disk = 0  # bytes that reached the file
        self.tail = bytearray()  # frames not written yet (all of them when in memory)
        self.in_memory = False  # no temporary folder, or writing failed: the tail holds the rest
        self.held: list[Any] = []  # records marshal could not write, in order
        self.count = 0
        self.spilled = 0  # records written as bytes (the rest are held)

    def __len__(self) -> int:
        return self.count

    def add(self, record: Any) -> None:
        import marshal

        self.count += 1
        try:
            data = marshal.dumps(record)
        except ValueError:  # a type marshal does not know, or nesting past its limit: hold it
            data = b""
        if not data or len(data) > _MAX_FRAME:
            self.held.append(record)
            self.tail += b"\0\0\0\0"
        else:
            self.spilled += 1
            self.tail += len(data).to_bytes(_HEADER, "little")
            self.tail += data
        if len(self.tail) >= WRITE_BYTES and not self.in_memory:
            self._write()

    def _write(self) -> None:
        if self.file is None:
            from kubegap_lint.core.tempdir import private_temp_dir

            folder = private_temp_dir()
            if folder is None:
                self.in_memory = True
                return
            import tempfile

            try:
                self.file = tempfile.TemporaryFile(dir=folder, buffering=0)
            except OSError:
                self.in_memory = True
                return
        view = memoryview(self.tail)
        done = 0
        try:
            while done < len(view):
                done += self.file.write(view[done:])
        except OSError:  # e.g. the disk is full: what was written stays there, the rest in memory
            self.in_memory = True
        finally:
            view.release()
        self.on_disk += done
        del self.tail[:done]

    def __iter__(self) -> Iterator[Any]:
        """Every record, in the order added: the bytes that reached the file, then the tail
        (a failed write may have cut a frame between the two)."""
        import marshal

        held = iter(self.held)
        tail = memoryview(self.tail)  # nothing is added while the records are read
        reading: Any = None
        if self.file is not None and self.on_disk:
            import os

            self.file.seek(0)
            # A second descriptor with a read buffer; closing it leaves the file open.
            reading = open(os.dup(self.file.fileno()), "rb", buffering=READ_BYTES)  # noqa: SIM115
        try:
            source = _Frames(reading, self.on_disk, tail)
            for _ in range(self.count):
                try:
                    size = int.from_bytes(source.take(_HEADER), "little")
                    record = marshal.loads(source.take(size)) if size else next(held)
                except OSError as exc:  # our own file, unreadable (an I/O error): end the run
                    from kubegap_lint.core.errors import StorageError

                    raise StorageError(f"cannot read back the workloads spilled to the temporary folder ({exc}):"
                                       " make the temporary folder (TMPDIR) readable and writable") from exc
                yield record
        finally:
            tail.release()
            if reading is not None:
                reading.close()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        self.tail = bytearray()
        self.held = []


class _Frames:
    """The file's first `on_disk` bytes followed by the tail held in memory, read in order."""

    def __init__(self, reading: Any, on_disk: int, tail: memoryview) -> None:
        self.reading = reading
        self.left = on_disk if reading is not None else 0
        self.tail = tail
        self.at = 0

    def take(self, size: int) -> bytes | memoryview:
        if not self.left:
            piece = self.tail[self.at:self.at + size]
            self.at += size
            return piece
        first = min(size, self.left)
        data = self.reading.read(first)
        if len(data) != first:
            raise OSError("the spill file is shorter than what was written to it")
        self.left -= first
        return data if first == size else data + self.take(size - first)

"""Where the input index keeps its facts: in dictionaries, or, past a number of them, in a
private SQLite database on disk, so that a stream of a million PodDisruptionBudgets, PVCs and
ConfigMaps costs disk, not memory.

Both stores offer the same few operations on named tables, and `InputIndex` uses nothing
else, so its semantics do not depend on where the facts are:
- `put` (a later value replaces), `put_first` (the first value stays), `get`, `has`;
- `append` and `numbers`: a multimap from a key to ascending numbers (the budgets' buckets).
In the database a key is its `repr` (keys are tuples of strings, numbers and None: equal keys
have equal reprs; a pickle would not do, since it shares repeated objects) and a value its
pickle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from kubegap_lint.core.errors import StorageError

# Facts held in dictionaries before they move to disk: about 1 KB each with their strings
# (measured with tracemalloc on bench/stream_memory.py's stream), so about 20 MB.
FACTS_IN_MEMORY = 20_000


class MemoryFacts:
    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, Any]] = {}
        self.multimaps: dict[str, dict[Any, list[int]]] = {}
        self.count = 0

    def put(self, table: str, key: Any, value: Any) -> None:
        values = self.tables.setdefault(table, {})
        self.count += key not in values
        values[key] = value

    def put_first(self, table: str, key: Any, value: Any) -> None:
        values = self.tables.setdefault(table, {})
        self.count += key not in values
        values.setdefault(key, value)

    def get(self, table: str, key: Any) -> Any:
        return self.tables.get(table, {}).get(key)

    def has(self, table: str, key: Any) -> bool:
        return key in self.tables.get(table, {})

    def append(self, table: str, key: Any, number: int) -> None:
        self.multimaps.setdefault(table, {}).setdefault(key, []).append(number)
        self.count += 1

    def numbers(self, table: str, keys: Iterable[Any]) -> list[int]:
        found = self.multimaps.get(table, {})
        return sorted({number for key in keys for number in found.get(key, ())})

    def entries(self) -> Iterator[tuple[str, str, Any, Any]]:
        """Everything, as ("put" | "append", table, key, value), in the order it was stored."""
        for table, values in self.tables.items():
            for key, value in values.items():
                yield "put", table, key, value
        for table, multimap in self.multimaps.items():
            for key, numbers in multimap.items():
                for number in numbers:
                    yield "append", table, key, number


class DiskFacts:
    """The same operations on a private SQLite database, which is deleted when closed. A
    database error (the temporary folder is full or read-only) becomes a StorageError: one
    line for the user, exit code 2."""

    def __init__(self) -> None:
        import sqlite3

        from kubegap_lint.core.tempdir import private_temp_dir

        # "" names a private temporary database on disk (SQLite keeps a small page cache),
        # in our private temp folder: SQLite's own search (SQLITE_TMPDIR, TMPDIR, /var/tmp,
        # /usr/tmp, /tmp) ends in the current folder. SQLITE_TMPDIR is read when SQLite makes
        # its first temporary file; the pragma (deprecated, may be compiled out) as well.
        # With no private folder, the database and its temporary tables stay in memory.
        folder = private_temp_dir()
        if folder is None:
            self.db = sqlite3.connect(":memory:")
            self.execute("PRAGMA temp_store = MEMORY")
        else:
            os.environ["SQLITE_TMPDIR"] = folder
            self.db = sqlite3.connect("")
            if "'" not in folder:
                self.execute(f"PRAGMA temp_store_directory = '{folder}'")
        self.execute("CREATE TABLE facts (tbl TEXT, key TEXT, value BLOB, PRIMARY KEY (tbl, key)) WITHOUT ROWID")
        self.execute("CREATE TABLE multimap (tbl TEXT, key TEXT, number INTEGER)")
        self.execute("CREATE INDEX multimap_key ON multimap (tbl, key)")

    def execute(self, statement: str, values: tuple[Any, ...] = ()) -> Any:
        import sqlite3

        try:
            return self.db.execute(statement, values)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot keep the input's facts in a temporary database ({exc}): make the"
                               " temporary folder (TMPDIR) writable, with free space") from None

    def put(self, table: str, key: Any, value: Any) -> None:
        self.execute("INSERT OR REPLACE INTO facts VALUES (?, ?, ?)", (table, _key(key), _pickle(value)))

    def put_first(self, table: str, key: Any, value: Any) -> None:
        self.execute("INSERT OR IGNORE INTO facts VALUES (?, ?, ?)", (table, _key(key), _pickle(value)))

    def get(self, table: str, key: Any) -> Any:
        row = self.execute("SELECT value FROM facts WHERE tbl = ? AND key = ?", (table, _key(key))).fetchone()
        return None if row is None else _unpickle(row[0])

    def has(self, table: str, key: Any) -> bool:
        row = self.execute("SELECT 1 FROM facts WHERE tbl = ? AND key = ?", (table, _key(key))).fetchone()
        return row is not None

    def append(self, table: str, key: Any, number: int) -> None:
        self.execute("INSERT INTO multimap VALUES (?, ?, ?)", (table, _key(key), number))

    def numbers(self, table: str, keys: Iterable[Any]) -> list[int]:
        found: set[int] = set()
        for key in keys:
            rows = self.execute("SELECT number FROM multimap WHERE tbl = ? AND key = ?", (table, _key(key)))
            found.update(number for (number,) in rows)
        return sorted(found)

    def load(self, entries: Iterable[tuple[str, str, Any, Any]]) -> None:
        for operation, table, key, value in entries:
            (self.put if operation == "put" else self.append)(table, key, value)

    def close(self) -> None:
        self.db.close()


def _key(key: Any) -> str:
    return repr(key)


def _pickle(value: Any) -> bytes:
    import pickle  # only a run with its facts on disk needs it

    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _unpickle(data: bytes) -> Any:
    import pickle

    return pickle.loads(data)

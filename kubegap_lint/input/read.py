"""Reading one source into Kubernetes resources with positions, and input faults.

Decoding, splitting (scan.py) and parsing (parse.py) meet here. A fault in one document never
stops the others: it becomes an `InputFault` that the evaluate stage reports as a KG0xx finding.
`kind: List` (and `*List`) documents are expanded into their items, each keeping its lines.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import Any

from kubegap_lint.core.model import Position, ResourceRef, Severity
from kubegap_lint.core.record import field, record
from kubegap_lint.input.judged import looks_kubernetes, reported
from kubegap_lint.input.limits import MAX_DOCUMENT_CHARS
from kubegap_lint.input.parse import KeyPath, PositionIndex, parse_chunk
from kubegap_lint.input.scan import Chunk, split_documents, split_texts
from kubegap_lint.input.text import normal_text


@record
class Resource:
    """One Kubernetes object from the input, with where it came from."""

    path: str
    document_index: int
    data: dict[str, Any]
    positions: PositionIndex
    start: Position
    helm_source: str | None = None
    comments: list[tuple[int, int, str]] = field(default_factory=list)
    item_index: int | None = None  # position inside a List
    chars: int = 0  # length of the document's text: what keeping it parsed costs (stream.py)
    item_path: KeyPath | None = None  # a List item's key path, when it is not ("items", item_index)
    # ref() once made: each policy evaluated on a workload asks for it (the data is never changed)
    _ref: ResourceRef | None = field(default=None, init=False, repr=False, compare=False)

    def __init__(self, path: str, document_index: int, data: dict[str, Any], positions: PositionIndex,
                 start: Position, helm_source: str | None = None,
                 comments: list[tuple[int, int, str]] | None = None, item_index: int | None = None,
                 chars: int = 0, item_path: KeyPath | None = None) -> None:  # one a resource: by hand
        self.path = path
        self.document_index = document_index
        self.data = data
        self.positions = positions
        self.start = start
        self.helm_source = helm_source
        self.comments = [] if comments is None else comments
        self.item_index = item_index
        self.chars = chars
        self.item_path = item_path

    @property
    def base(self) -> KeyPath:
        """The resource's key path inside its document: () or ("items", n) for a List item
        (("items", 0, "items", 2) for an item of a List inside a List)."""
        if self.item_path is not None:
            return self.item_path
        return () if self.item_index is None else ("items", self.item_index)

    @property
    def kind(self) -> str:
        return str(self.data.get("kind"))

    @property
    def api_version(self) -> str | None:
        value = self.data.get("apiVersion")
        return value if isinstance(value, str) else None

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.data.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str | None:
        """metadata.name; for a resource named by the API server (only `generateName`), the
        prefix and `*` (`train-*`), so findings say which resource they are about."""
        name = self.metadata.get("name")
        if name is None:
            prefix = self.metadata.get("generateName")
            return None if prefix is None or isinstance(prefix, (dict, list)) else f"{prefix}*"
        return str(name)

    @property
    def namespace(self) -> str | None:
        namespace = self.metadata.get("namespace")
        return None if namespace is None else str(namespace)

    def ref(self) -> ResourceRef:
        ref = self._ref
        if ref is None:
            ref = self._ref = ResourceRef(self.kind, self.name, self.namespace, self.api_version)
        return ref


@record(frozen=True)
class InputFault:
    """A problem in the input itself, reported under one of the KG0xx rules."""

    rule: str  # the rule's name, e.g. "yaml-syntax-error"
    message: str
    path: str
    position: Position
    document_index: int | None = None
    helm_source: str | None = None
    # At most this severity, whatever the rule's (a subchart not vendored is a note by nature).
    cap: Severity | None = None


@record
class ReadStats:
    files: int = 0
    documents: int = 0
    empty_documents: int = 0
    non_kubernetes_documents: int = 0
    resources: int = 0


def is_kubernetes_object(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("apiVersion"), str)
        and isinstance(data.get("kind"), str)
        and bool(data.get("kind"))
    )


def _chunk_lines(chunk: Chunk) -> range:
    return range(chunk.first_line + 1, chunk.first_line + 1 + chunk.text.count("\n") + 1)


def read_text(
    path: str, text: str, stats: ReadStats, bad_lines: list[int] | None = None
) -> Iterator[Resource | InputFault]:
    """Yield the resources and input faults of one stream, in document order."""
    return read_texts(path, [normal_text(text)], stats, sorted(bad_lines or []))


def read_lines(
    path: str, lines: Iterable[str], stats: ReadStats, bad_lines: list[int] | None = None,
) -> Iterator[Resource | InputFault]:
    """Like read_text, from lines read as they come (stream.source_lines). bad_lines may grow
    while the lines are read; it must stay in ascending order."""
    bad = bad_lines if bad_lines is not None else []
    for chunk in split_documents(lines):
        yield from read_chunk(path, chunk, stats, bad)


def read_texts(
    path: str, texts: Iterable[str], stats: ReadStats, bad_lines: list[int] | None = None,
) -> Iterator[Resource | InputFault]:
    """read_lines from pieces of whole lines (stream.source_texts, scan.split_texts)."""
    bad = bad_lines if bad_lines is not None else []
    for chunk in split_texts(texts):
        yield from read_chunk(path, chunk, stats, bad)


def _bad_line_in(chunk: Chunk, bad: list[int]) -> int | None:
    """The first undecodable line inside the chunk, if any (bad is sorted)."""
    if not bad:
        return None
    span = _chunk_lines(chunk)
    position = bisect.bisect_left(bad, span.start)
    if position < len(bad) and bad[position] in span:
        return bad[position]
    return None


def read_chunk(path: str, chunk: Chunk, stats: ReadStats, bad: list[int]) -> Iterator[Resource | InputFault]:
    """The resources and input faults of one document (parallel.py reads chunks in workers)."""
    stats.documents += 1
    if not chunk.has_content:
        stats.empty_documents += 1
        return
    hit = _bad_line_in(chunk, bad)
    if hit is not None:
        yield InputFault(
            "yaml-syntax-error",
            "the file is not valid UTF-8 here; save it as UTF-8",
            path, Position(hit, 1), chunk.index, chunk.helm_source,
        )
        return
    if chunk.too_large:
        yield InputFault(
            "document-too-large",
            f"this document holds more than {MAX_DOCUMENT_CHARS // 2**20} MiB of text; it is"
            " not linted (the API server refuses objects over 3 MiB)",
            path, Position(chunk.first_line + 1, 1), chunk.index, chunk.helm_source,
        )
        return
    if chunk.template_line is not None:
        if not looks_kubernetes(chunk.text):  # a template of something else (judged.py)
            stats.non_kubernetes_documents += 1
            return
        yield InputFault(
            "unrendered-template",
            "this document holds Go-template text ({{ ... }}); render the chart with"
            " `helm template` and lint the output",
            path, Position(chunk.template_line, 1), chunk.index, chunk.helm_source,
        )
        return
    parsed = parse_chunk(chunk)
    data = parsed.data
    kubernetes = data is not None and is_kubernetes_object(data)
    problems = [p for p in parsed.problems if reported(p.rule, path, chunk.text, data, kubernetes)]
    for problem in problems:
        yield InputFault(
            problem.rule, problem.message, path, problem.position, chunk.index, chunk.helm_source
        )
    if data is None:
        if not parsed.problems:
            stats.empty_documents += 1
        elif not problems:  # only faults of something that is not Kubernetes (judged.py)
            stats.non_kubernetes_documents += 1
        return
    if not kubernetes:
        stats.non_kubernetes_documents += 1
        return
    items = _list_items(data)
    if items is None:
        stats.resources += 1
        yield Resource(path, chunk.index, data, parsed.positions, parsed.start,
                       chunk.helm_source, chunk.comments, chars=len(chunk.text))
        return
    for item_index, (item, item_path) in enumerate(_expanded(items)):
        if is_kubernetes_object(item):
            stats.resources += 1
            start = parsed.positions.start(item_path) or parsed.start
            yield Resource(path, chunk.index, item, parsed.positions, start,
                           chunk.helm_source, chunk.comments, item_index, len(chunk.text),
                           None if item_path == ("items", item_index) else item_path)


def _expanded(items: list[Any]) -> Iterator[tuple[Any, KeyPath]]:
    """The items of a List, with Lists inside it expanded in place (depth first, in order), each
    with its key path in the document. Indexes count the expanded items, so each keeps one index
    on every reading."""
    stack: list[tuple[Iterator[tuple[int, Any]], KeyPath]] = [(enumerate(items), ("items",))]
    while stack:
        entries, where = stack[-1]
        entry: Any = next(entries, _END)
        if entry is _END:
            stack.pop()
            continue
        number, item = entry
        inner = _list_items(item) if is_kubernetes_object(item) else None
        if inner is None:
            yield item, (*where, number)
        else:
            stack.append((enumerate(inner), (*where, number, "items")))


_END = object()


def _list_items(data: dict[str, Any]) -> list[Any] | None:
    """The items of a `kind: List` (or `FooList`) document; None for any other object."""
    kind = data.get("kind", "")
    if kind == "List" or (kind.endswith("List") and isinstance(data.get("items"), list)):
        items = data.get("items")
        return items if isinstance(items, list) else []
    return None

"""Splitting a YAML stream into documents with a scan of its raw lines (before parse.py).

A line that starts with `---` or `...` (followed by white space or nothing) can only be a
document marker in YAML, never content, so splitting there is exact and lets one broken
document fail alone. The same pass collects what the fast parser throws away: the Helm
`# Source:` header of each document, the inline `# kubegap:` comments, and Go-template text
that says the file was never rendered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kubegap_lint.core.record import field, record
from kubegap_lint.input.limits import MAX_DOCUMENT_CHARS
from kubegap_lint.input.text import LINE_RE as _LINE_RE

# The value runs to the last character that is not white space: matched greedily, then one step
# back (a lazy `(\S.*?)\s*$` tries the end at every character: 2.7x the time).
_SOURCE_RE = re.compile(r"^#\s*Source:\s*(\S(?:.*\S)?)\s*$")
# Helm/Go-template actions as Helm charts write them. Prometheus-style `{{ $labels.x }}` inside
# string values is legitimate rendered content and must not match.
_TEMPLATE_RE = re.compile(
    r"\{\{-?\s*(?:\.Values|\.Release|\.Chart|\.Capabilities|\.Files|\.Template|include\b|"
    r"template\b|toYaml\b|tpl\b|if\b|else\b|end\b|range\b|with\b|define\b|required\b|"
    r"default\b|printf\b|quote\b|\$\.|-)"
)
DIRECTIVE_MARK = "kubegap:"
_MARKER_STARTS = "%-."  # first characters of `---`, `...` and `%` directive lines


@record
class Chunk:
    """The raw text of one document and what the line scan learnt about it."""

    index: int  # position of the document in its stream, from 0
    first_line: int  # 0-based line of the chunk's first line in the file
    text: str = ""
    helm_source: str | None = None
    template_line: int | None = None  # 1-based line of the first unrendered template action
    comments: list[tuple[int, int, str]] = field(default_factory=list)  # (line, col, text)
    has_content: bool = False
    explicit_start: bool = False  # opened by `---`: an empty one is still a document
    too_large: bool = False  # over limits.MAX_DOCUMENT_CHARS: its text was dropped, not kept

    def __init__(self, index: int, first_line: int, text: str = "", helm_source: str | None = None,
                 template_line: int | None = None, comments: list[tuple[int, int, str]] | None = None,
                 has_content: bool = False, explicit_start: bool = False,
                 too_large: bool = False) -> None:  # one a document: by hand (core/record.py)
        self.index = index
        self.first_line = first_line
        self.text = text
        self.helm_source = helm_source
        self.template_line = template_line
        self.comments = [] if comments is None else comments
        self.has_content = has_content
        self.explicit_start = explicit_start
        self.too_large = too_large


def _inherit(closed: Chunk, inherited: str | None) -> str | None:
    """The source the next document takes when it names none. Helm prints `---`, `# Source:`,
    then the document as its template wrote it; a section that rendered empty but for its own
    `---` (`---` then `{{- if false }}...{{ end }}` then `---`) leaves the `# Source:` as an
    empty document, and the next document, the section that follows in the same template,
    without one."""
    if closed.has_content:
        return None
    return closed.helm_source or inherited


def _is_marker(line: str, marker: str) -> bool:
    return line.startswith(marker) and (len(line) == 3 or line[3] in " \t\r\n")


def split_documents(lines: Iterable[str], max_chars: int | None = None) -> Iterator[Chunk]:
    """Yield one chunk per YAML document, empty ones included (`has_content` tells them apart).

    `lines` keep their line ends, as from str.splitlines(True) or a text file. Comments before
    the first `---` are that document's preamble, not a document of their own. A document
    longer than max_chars (default limits.MAX_DOCUMENT_CHARS) keeps no text (`too_large`), so
    memory stays bounded by max_chars. split_texts makes the same chunks from pieces of text.
    """
    scan = _Scan(MAX_DOCUMENT_CHARS if max_chars is None else max_chars)
    done = scan.done
    for line in lines:
        scan.line(line)
        if done:
            yield from done
            done.clear()
    yield from scan.finish()


def split_texts(texts: Iterable[str], max_chars: int | None = None) -> Iterator[Chunk]:
    """split_documents, from pieces of text that each hold whole lines (only the last piece of
    a stream may end without a line end), as stream.source_texts reads them.

    Lines end only at \\n, \\r\\n or \\r (text.normal_text: the other characters str.splitlines
    breaks at are content here). The lines inside a document are not split one by one: a
    search for the next line that starts with `-`, `.` or `%` (a marker or a directive can
    start no other) passes over them at C speed, and only lines holding `kubegap:` or `{{`
    are looked at alone. The chunks are the ones split_documents makes of the same lines.
    """
    scan = _Scan(MAX_DOCUMENT_CHARS if max_chars is None else max_chars)
    done = scan.done
    for text in texts:
        scan.text(text)
        if done:
            yield from done
            done.clear()
    yield from scan.finish()


class _Scan:
    """The state of one stream's scan: the document being read, and the documents done."""

    __slots__ = ("chunk", "parts", "after_directive", "line_no", "size", "max_chars", "done", "inherited")

    def __init__(self, max_chars: int) -> None:
        self.chunk = Chunk(index=0, first_line=0)
        self.parts: list[str] = []
        self.after_directive = False
        self.line_no = 0  # lines scanned so far
        self.size = 0  # characters of the current document so far
        self.max_chars = max_chars
        self.done: list[Chunk] = []
        self.inherited: str | None = None  # the `# Source:` of empty documents just before (_inherit)

    def finish(self) -> list[Chunk]:
        chunk = self.chunk
        if chunk.has_content or chunk.explicit_start:
            chunk.text = "".join(self.parts)
            return [chunk]
        return []

    def _keep(self, text: str) -> None:
        """Add text to the current document, unless that makes it too large (limits.py)."""
        self.size += len(text)
        if self.size > self.max_chars:  # an oversized document keeps no text
            self.chunk.too_large = True
            self.parts = []
        else:
            self.parts.append(text)

    def line(self, line: str) -> None:
        """Scan one line (with its end): every line of split_documents, and the lines of
        split_texts that may open or close a document (`text` passes over the others)."""
        chunk = self.chunk
        if chunk.has_content and line[:1] not in _MARKER_STARTS:
            # Most lines: inside a document that has content, neither a marker nor a
            # directive. Only inline directives and template text are left to look for.
            self._keep(line)
            self.line_no += 1
            if "#" in line and DIRECTIVE_MARK in line:
                _collect_directive(chunk, line, self.line_no)
            if chunk.template_line is None and "{{" in line and _TEMPLATE_RE.search(line):
                chunk.template_line = self.line_no
            return
        if line.startswith("%") and not chunk.has_content:
            self.after_directive = True
        elif _is_marker(line, "---"):
            if self.after_directive:
                self.after_directive = False
                chunk.explicit_start = True
            elif chunk.has_content or chunk.explicit_start:
                chunk.text = "".join(self.parts)
                self.inherited = _inherit(chunk, self.inherited)
                self.done.append(chunk)
                chunk = self.chunk = Chunk(index=chunk.index + 1, first_line=self.line_no, explicit_start=True)
                self.parts = []
                self.size = 0
            else:
                chunk.explicit_start = True
        self._keep(line)
        self.line_no += 1
        line_no = self.line_no
        stripped = line.strip()
        if stripped.startswith("#"):
            if not chunk.has_content and chunk.helm_source is None:
                match = _SOURCE_RE.match(stripped)
                if match:
                    chunk.helm_source = match.group(1)
        elif stripped and not line.startswith("%"):
            if not (_is_marker(line, "---") or _is_marker(line, "...")) or len(stripped) > 3:
                chunk.has_content = True
                if chunk.helm_source is None:
                    chunk.helm_source = self.inherited
        if "#" in line and DIRECTIVE_MARK in line:
            _collect_directive(chunk, line, line_no)
        if chunk.template_line is None and "{{" in line and _TEMPLATE_RE.search(line):
            chunk.template_line = line_no
        if _is_marker(line, "..."):
            chunk.text = "".join(self.parts)
            if chunk.has_content or chunk.explicit_start:
                self.done.append(chunk)
                self.chunk = Chunk(index=chunk.index + 1, first_line=line_no)
            else:
                self.chunk = Chunk(index=chunk.index, first_line=line_no)
            self.parts = []
            self.size = 0

    def text(self, text: str) -> None:
        """Scan a piece of whole lines."""
        if "\r" in text:  # rare: lines may end at \r\n or a lone \r; scanned one by one
            for line in _LINE_RE.findall(text):
                self.line(line)
            return
        end = len(text)
        pos = 0
        # Inside a document with content only `---` and `...` lines end it (a `%` line is
        # content there, and so is any other line starting with `-` or `.`): where the next
        # line starting with each begins, searched again only once passed.
        dashes = dots = -1
        while pos < end:
            if self.chunk.has_content and not text.startswith(_ENDS, pos):
                if dashes < pos:
                    dashes = text.find("\n---", pos) + 1 or end
                if dots < pos:
                    dots = text.find("\n...", pos) + 1 or end
                stop = dashes if dashes < dots else dots
                self._content(text, pos, stop)
                pos = stop
                continue
            line_end = text.find("\n", pos) + 1 or end
            self.line(text[pos:line_end])
            pos = line_end

    def _content(self, text: str, start: int, stop: int) -> None:
        """text[start:stop]: whole lines inside a document with content, none a marker or a
        directive: what line() does for each of them, at once."""
        chunk = self.chunk
        self._keep(text[start:stop])
        first = self.line_no  # lines before start
        self.line_no += text.count("\n", start, stop)
        at = text.find(DIRECTIVE_MARK, start, stop)
        while at != -1:
            line_start = text.rfind("\n", start, at) + 1 or start
            line_end = text.find("\n", at, stop) + 1 or stop
            line = text[line_start:line_end]
            if "#" in line:
                _collect_directive(chunk, line, first + text.count("\n", start, line_start) + 1)
            at = text.find(DIRECTIVE_MARK, line_end, stop)
        if chunk.template_line is None:
            at = text.find("{{", start, stop)
            while at != -1:
                line_start = text.rfind("\n", start, at) + 1 or start
                line_end = text.find("\n", at, stop) + 1 or stop
                if _TEMPLATE_RE.search(text, line_start, line_end):
                    chunk.template_line = first + text.count("\n", start, line_start) + 1
                    break
                at = text.find("{{", line_end, stop)


_ENDS = ("---", "...")


def _collect_directive(chunk: Chunk, line: str, line_no: int) -> None:
    """Record a `# kubegap:...` comment with its 1-based line and column."""
    col = line.find("#")
    while col != -1:
        if line[col + 1 :].lstrip().startswith(DIRECTIVE_MARK):
            chunk.comments.append((line_no, col + 1, line[col:].rstrip("\r\n")))
            return
        col = line.find("#", col + 1)

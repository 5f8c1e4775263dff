"""Stage 2a: split a YAML stream into documents with a scan of its raw lines.

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

_SOURCE_RE = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$")
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


def _is_marker(line: str, marker: str) -> bool:
    return line.startswith(marker) and (len(line) == 3 or line[3] in " \t\r\n")


def split_documents(lines: Iterable[str], max_chars: int = MAX_DOCUMENT_CHARS) -> Iterator[Chunk]:
    """Yield one chunk per YAML document, empty ones included (`has_content` tells them apart).

    `lines` keep their line ends, as from str.splitlines(True) or a text file. Comments before
    the first `---` are that document's preamble, not a document of their own. A document
    longer than max_chars keeps no text (`too_large`), so memory stays bounded by max_chars.
    """
    chunk = Chunk(index=0, first_line=0)
    parts: list[str] = []
    after_directive = False
    line_no = 0
    size = 0

    for line in lines:
        if chunk.has_content and line[:1] not in _MARKER_STARTS:
            # Most lines: inside a document that has content, neither a marker nor a
            # directive. Only inline directives and template text are left to look for.
            size += len(line)
            if size > max_chars:  # an oversized document keeps no text (limits.py)
                chunk.too_large = True
                parts = []
            else:
                parts.append(line)
            line_no += 1
            if "#" in line and DIRECTIVE_MARK in line:
                _collect_directive(chunk, line, line_no)
            if chunk.template_line is None and "{{" in line and _TEMPLATE_RE.search(line):
                chunk.template_line = line_no
            continue
        if line.startswith("%") and not chunk.has_content:
            after_directive = True
        elif _is_marker(line, "---"):
            if after_directive:
                after_directive = False
                chunk.explicit_start = True
            elif chunk.has_content or chunk.explicit_start:
                chunk.text = "".join(parts)
                yield chunk
                chunk = Chunk(index=chunk.index + 1, first_line=line_no, explicit_start=True)
                parts = []
                size = 0
            else:
                chunk.explicit_start = True
        size += len(line)
        if size > max_chars:
            chunk.too_large = True
            parts = []
        else:
            parts.append(line)
        line_no += 1
        stripped = line.strip()
        if stripped.startswith("#"):
            if not chunk.has_content and chunk.helm_source is None:
                match = _SOURCE_RE.match(stripped)
                if match:
                    chunk.helm_source = match.group(1)
        elif stripped and not line.startswith("%"):
            if not (_is_marker(line, "---") or _is_marker(line, "...")) or len(stripped) > 3:
                chunk.has_content = True
        if "#" in line and DIRECTIVE_MARK in line:
            _collect_directive(chunk, line, line_no)
        if chunk.template_line is None and "{{" in line and _TEMPLATE_RE.search(line):
            chunk.template_line = line_no
        if _is_marker(line, "..."):
            chunk.text = "".join(parts)
            if chunk.has_content or chunk.explicit_start:
                yield chunk
                chunk = Chunk(index=chunk.index + 1, first_line=line_no)
            else:
                chunk = Chunk(index=chunk.index, first_line=line_no)
            parts = []
            size = 0
    if chunk.has_content or chunk.explicit_start:
        chunk.text = "".join(parts)
        yield chunk


def _collect_directive(chunk: Chunk, line: str, line_no: int) -> None:
    """Record a `# kubegap:...` comment with its 1-based line and column."""
    col = line.find("#")
    while col != -1:
        if line[col + 1 :].lstrip().startswith(DIRECTIVE_MARK):
            chunk.comments.append((line_no, col + 1, line[col:].rstrip("\r\n")))
            return
        col = line.find("#", col + 1)

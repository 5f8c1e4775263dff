"""scan.split_texts (pieces of whole lines, as a lint reads a stream) makes exactly the chunks
scan.split_documents makes of the same text's lines, whatever the pieces."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.input.scan import Chunk, split_documents, split_texts
from kubegap_lint.input.stream import source_lines, source_texts
from kubegap_lint.input.text import normal_text, split_lines


def _fields(chunk: Chunk) -> tuple[object, ...]:
    return (chunk.index, chunk.first_line, chunk.text, chunk.helm_source, chunk.template_line,
            chunk.comments, chunk.has_content, chunk.explicit_start, chunk.too_large)


def _pieces(lines: list[str], cuts: list[int]) -> list[str]:
    """The lines joined into pieces, cut before the given line numbers."""
    bounds = sorted({0, len(lines), *(c % (len(lines) + 1) for c in cuts)})
    return ["".join(lines[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def _same(text: str, cuts: list[int], max_chars: int | None = None) -> None:
    lines = split_lines(text)
    expected = [_fields(c) for c in split_documents(lines, max_chars)]
    for pieces in ([normal_text(text)], lines, _pieces(lines, cuts)):
        assert [_fields(c) for c in split_texts(pieces, max_chars)] == expected, pieces


# Lines a stream is made of: markers with what may follow them, directives, Helm headers,
# inline `# kubegap:` comments, template text, sequences at column 0, odd line ends.
LINE = st.sampled_from([
    "---", "--- # c", "---x", "--- a: 1", "----", "...", "... # end", "....", "%YAML 1.1", "%TAG ! x",
    "# Source: chart/templates/a.yaml", "#  Source:  b.yaml  ", "# licence", "",  "   ", "\t",
    "apiVersion: v1", "kind: Pod", "a: 1", "  b: 2  # kubegap:ignore KG201 why", "- x",
    "-x: 1", ".a: 1", "%x: 1", "c: {{ .Values.x }}", "d: '{{ $labels.pod }}'", "e: x # {{- if",
    "f: '#' kubegap: no", "g: 1 # one # kubegap:ignore KG100 two", "\ufeffh: 1", "k: \x85 \u2028 v",
    "kubegap: {{ include", "{{", "- {{ end }}",
])
END = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])


@st.composite
def streams(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(LINE, END), max_size=40))
    text = "".join(line + end for line, end in parts)
    if text and draw(st.booleans()):
        text = text.rstrip("\r\n")  # no final line end
    return text


@settings(max_examples=400, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_split_texts_makes_the_chunks_of_split_documents(text: str, cuts: list[int]) -> None:
    _same(text, cuts)


@settings(max_examples=200, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=60), max_size=6),
       st.integers(min_value=1, max_value=80))
def test_the_size_bound_cuts_the_same_documents(text: str, cuts: list[int], max_chars: int) -> None:
    _same(text, cuts, max_chars)


def test_named_cases() -> None:
    cases = [
        "a: 1\r\n---\r\nb: 2\r\n",  # CRLF
        "a: 1\n---\nb: 2",  # no final line end
        "a: 1\n--- # next\nb: 2\n---   \nc: 3\n--- x: 1\n",  # `---` with trailing text or comments
        "a: 1\n...\n# after\n---\nb: 2\n...\n",  # `...` document end
        "\ufeff# Source: c/t.yaml\na: 1\n---\nb: 2\n",  # a BOM left in the text
        "# Source: c/a.yaml\na: 1\n  # kubegap:ignore KG201 r\nb: |\n  {{ .Values.x }}\n- y\n%x\n",
        "a: 1\rb: 2\r---\rc: 3",  # lone CR ends
    ]
    for text in cases:
        _same(text, [1, 2, 3])


@settings(max_examples=200, deadline=None)
@given(streams(), st.integers(min_value=1, max_value=64))
def test_source_texts_are_the_source_lines_joined(text: str, block: int) -> None:
    import kubegap_lint.input.stream as stream

    data = text.encode("utf-8", "surrogatepass")
    old = stream.BLOCK_BYTES
    stream.BLOCK_BYTES = block
    try:
        bad_lines: list[int] = []
        lines = list(source_lines(io.BytesIO(data), bad_lines))
        bad_texts: list[int] = []
        texts = list(source_texts(io.BytesIO(data), bad_texts))
    finally:
        stream.BLOCK_BYTES = old
    assert "".join(texts) == "".join(lines) and bad_texts == bad_lines
    assert [_fields(c) for c in split_texts(texts)] == [_fields(c) for c in split_documents(lines)]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("# Sourc:e\t\x0b\x1c\x85\u2028ab./")), max_size=30))
def test_the_source_pattern_finds_what_the_lazy_one_found(line: str) -> None:
    import re

    from kubegap_lint.input.scan import _SOURCE_RE

    lazy = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$")  # the pattern before: the reference
    for text in (line, line.strip(), "# Source: " + line, "# Source: " + line.strip()):
        old, new = lazy.match(text), _SOURCE_RE.match(text)
        assert (old and old.group(1)) == (new and new.group(1)), text

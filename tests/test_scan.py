from kubegap_lint.input.scan import split_documents


def _chunks(text: str):
    return list(split_documents(text.splitlines(True)))


def test_helm_stream_keeps_source_headers_and_lines() -> None:
    text = (
        "---\n# Source: chart/templates/a.yaml\napiVersion: v1\nkind: A\n"
        "---\n# Source: chart/templates/empty.yaml\n"
        "---\n# Source: chart/templates/b.yaml\napiVersion: v1\nkind: B\n"
    )
    chunks = _chunks(text)
    assert [(c.index, c.first_line, c.has_content, c.helm_source) for c in chunks] == [
        (0, 0, True, "chart/templates/a.yaml"),
        (1, 4, False, "chart/templates/empty.yaml"),
        (2, 6, True, "chart/templates/b.yaml"),
    ]


def test_preamble_comments_belong_to_the_first_document() -> None:
    chunks = _chunks("# licence\n---\na: 1\n")
    assert len(chunks) == 1 and chunks[0].first_line == 0 and chunks[0].has_content


def test_marker_needs_white_space_after_it() -> None:
    chunks = _chunks("a: 1\n----\nb: 2\n---x\n")
    assert len(chunks) == 1


def test_document_end_marker_and_directives() -> None:
    chunks = _chunks("a: 1\n...\n%YAML 1.1\n---\nb: 2\n")
    assert [c.index for c in chunks] == [0, 1]
    assert chunks[1].text.startswith("%YAML")


def test_inline_directives_and_template_lines_are_collected() -> None:
    chunks = _chunks("a: 1  # kubegap:ignore KG201 reason\nb: {{ .Values.x }}\nc: '{{ $labels.x }}'\n")
    assert chunks[0].comments == [(1, 7, "# kubegap:ignore KG201 reason")]
    assert chunks[0].template_line == 2


def test_prometheus_braces_are_not_templates() -> None:
    assert _chunks("a: '{{ $value }} {{ $labels.pod }}'\n")[0].template_line is None

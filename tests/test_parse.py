import pytest

from kubegap_lint.core.model import Position
from kubegap_lint.input.parse import parse_chunk
from kubegap_lint.input.scan import split_documents


def _parse(text: str):
    return [parse_chunk(c) for c in split_documents(text.splitlines(True)) if c.has_content]


def test_scalars_resolve_like_kubernetes_yaml() -> None:
    (doc,) = _parse("a: [1, '1', yes, 'yes', 0x10, 1.5, ~, null, '', 1e3, 010, +3, text]\n")
    assert doc.data["a"] == [1, "1", True, "yes", 16, 1.5, None, None, "", 1000.0, 10, 3, "text"]


def test_digit_strings_resolve_with_their_exact_types() -> None:
    # Plain ASCII digits without a leading zero are ints (read without the expressions); a
    # leading zero makes a float (_FLOAT_RE), and other digits stay strings.
    (doc,) = _parse("a: [0, 7, 10, 123456789012345678901, 00, 007, 1_0, -0, 1\u0663, 1\u00b2, \u0663]\n")
    values = doc.data["a"]
    assert values == [0, 7, 10, 123456789012345678901, 0.0, 7.0, 10, 0, "1\u0663", "1\u00b2", "\u0663"]
    assert [type(v) for v in values] == [int, int, int, int, float, float, int, int, str, str, str]
    (doc,) = _parse("a: " + "7" * 5000 + "\n")  # past int()'s digit limit: kept as text, no crash
    assert doc.data["a"] == "7" * 5000


def test_tags_are_never_constructed() -> None:
    (doc,) = _parse("a: !!python/object/apply:os.system ['echo hi']\nb: !Ref thing\nc: !!int '7'\n")
    assert doc.data == {"a": ["echo hi"], "b": "thing", "c": 7}
    assert not doc.problems


def test_positions_of_containers_and_keys() -> None:
    (doc,) = _parse("spec:\n  containers:\n    - name: a\n      env:\n        - {name: X, value: '1'}\n")
    positions = doc.positions
    assert positions.key(("spec",)) == Position(1, 1)
    assert positions.key(("spec", "containers")) == Position(2, 3)
    assert positions.start(("spec", "containers", 0)) == Position(3, 7)
    assert positions.key(("spec", "containers", 0, "env")) == Position(4, 7)
    assert positions.start(("spec", "containers", 0, "env", 0)) == Position(5, 11)
    assert positions.start(("spec", "containers", 0, "env", 0, "value")) == Position(5, 28)


def test_lines_are_offset_by_the_document_start() -> None:
    docs = _parse("a: 1\n---\nb:\n  c: 2\n")
    assert docs[1].positions.key(("b",)) == Position(3, 1)
    assert docs[1].positions.key(("b", "c")) == Position(4, 3)


def test_duplicate_keys_are_problems_and_the_last_value_wins() -> None:
    (doc,) = _parse("env: 1\nx: 2\nenv: 3\n")
    assert doc.data["env"] == 3
    assert [(p.rule, p.position) for p in doc.problems] == [("yaml-duplicate-key", Position(3, 1))]
    assert "first at line 1" in doc.problems[0].message


def test_merge_keys_apply_with_explicit_keys_winning() -> None:
    (doc,) = _parse("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\nl:\n  <<: [{z: 1}, {z: 2, w: 4}]\n")
    assert doc.data["d"] == {"y": 3, "x": 1}
    assert doc.data["l"] == {"z": 1, "w": 4}


def test_aliases_share_the_anchor_position() -> None:
    (doc,) = _parse("a: &x {k: 1}\nb: *x\n")
    assert doc.data["b"] is doc.data["a"]


def test_syntax_error_points_at_the_open_construct() -> None:
    (doc,) = _parse("a: 1\nb: [1, 2\n")
    assert doc.data is None
    assert doc.problems[0].rule == "yaml-syntax-error"
    assert doc.problems[0].position.line == 2


def test_alias_bomb_is_refused() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefg"):
        prev = "abcdefg"[i]
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    (doc,) = _parse("\n".join(lines) + "\n")
    assert doc.data is None
    assert doc.problems[0].rule == "yaml-alias-expansion"


def test_deep_nesting_does_not_recurse(monkeypatch) -> None:
    # Past limits.MAX_DEPTH a document is refused (KG007); lift the guard to show that the
    # walker itself has no depth limit.
    monkeypatch.setattr("kubegap_lint.input.limits.may_be_too_deep", lambda text: False)
    depth = 5000
    text = "a: " + "[" * depth + "]" * depth + "\n"
    (doc,) = _parse(text)
    node = doc.data["a"]
    for _ in range(depth - 1):
        node = node[0]
    assert node == []


def test_a_tab_used_for_indentation_says_what_to_do() -> None:
    (doc,) = _parse("a:\n\tb: 1\n")
    assert doc.problems[0].position == Position(2, 1)
    assert doc.problems[0].message.endswith("; a tab cannot indent YAML: use spaces")


def test_an_unclosed_quote_says_where_it_opens() -> None:
    (doc,) = _parse('metadata:\n  name: "x\nspec: {}\n')
    assert doc.problems[0].position == Position(2, 9)
    assert doc.problems[0].message == ("found unexpected end of stream (while scanning a quoted scalar);"
                                       " the quote that opens here is never closed")


_LINE_UP = "lines up with no line above it: indent the key like the other keys of its mapping"
_DEEPER = "so it reads as more of that line's value: indent the key like the other keys of its mapping"


@pytest.mark.parametrize(("text", "position", "message"), [
    # a key indented less than its siblings (and more than its parent)
    ("metadata:\n  name: x\n labels: {}\nspec: 1\n", Position(3, 2),
     f"did not find expected key (while parsing a block mapping); this line's indentation (1 space) {_LINE_UP}"),
    # in a list item, after a literal block, and after a key indented too far
    ("spec:\n  containers:\n    - name: a\n   image: b\n", Position(4, 4),
     f"did not find expected key (while parsing a block mapping); this line's indentation (3 spaces) {_LINE_UP}"),
    ("spec:\n  containers:\n    - name: a\n     image: b\n", Position(4, 6),
     "did not find expected '-' indicator (while parsing a block collection);"
     f" this line's indentation (5 spaces) {_LINE_UP}"),
    ("a:\n  b: |\n    text\n c: 1\n", Position(4, 2),
     f"did not find expected key (while parsing a block mapping); this line's indentation (1 space) {_LINE_UP}"),
    ("a:\n  b:\n      c: 1\n    d: 2\n", Position(4, 5),
     f"did not find expected key (while parsing a block mapping); this line's indentation (4 spaces) {_LINE_UP}"),
    # a key indented deeper than the line above it: the parser stops at its colon
    ("metadata:\n  name: x\n   labels: {}\n", Position(3, 10),
     "mapping values are not allowed in this context; this line is indented deeper than the line above it"
     f" (3 spaces against 2), {_DEEPER}"),
    ("spec:\n  containers:\n    - name: a\n       image: b\n", Position(4, 13),
     "mapping values are not allowed in this context; this line is indented deeper than the line above it"
     f" (7 spaces against 4), {_DEEPER}"),
    ("metadata:\n  name: a: b\n", Position(2, 10),
     "mapping values are not allowed in this context; a value that holds ': ' must be quoted"),
    # no hint where the indentation is not the fault: text after a quoted value, a list item
    # where a key is due, a key lined up with its siblings after a broken line
    ('a:\n  b: "x" y\n', Position(2, 10), "did not find expected key (while parsing a block mapping)"),
    ("a:\n  b: x\n  - c\n", Position(3, 3), "did not find expected key (while parsing a block mapping)"),
    ("a:\n  b: x\n  c: d: e\n", Position(3, 7),
     "mapping values are not allowed in this context; a value that holds ': ' must be quoted"),
    ("a: b\nc: d\n e: f\n", Position(3, 3), "mapping values are not allowed in this context; this line is"
     f" indented deeper than the line above it (1 space against 0), {_DEEPER}"),
])
def test_a_key_indented_off_its_mapping_says_so(text: str, position: Position, message: str) -> None:
    (doc,) = _parse(text)
    assert [(p.rule, p.position, p.message) for p in doc.problems] == [("yaml-syntax-error", position, message)]


def test_reading_leaves_garbage_collection_as_it_found_it() -> None:
    # parse_chunk turns the cyclic collector off while it composes and walks one document; it
    # must come back on after a document that parses, one that does not, and one with a
    # recursive alias, and stay off for a caller that had turned it off.
    import gc

    texts = ["a: 1\nb: [x, {c: d}]\n", "a: [1, 2\n", "a: &a [*a]\n"]
    assert gc.isenabled()
    results = [_parse(text)[0] for text in texts]
    assert gc.isenabled()
    assert results[0].data == {"a": 1, "b": ["x", {"c": "d"}]}
    assert [p.rule for p in results[1].problems] == ["yaml-syntax-error"]
    assert [p.rule for p in results[2].problems] == ["yaml-alias-expansion"]
    gc.disable()
    try:
        assert _parse(texts[0])[0].data == {"a": 1, "b": ["x", {"c": "d"}]}
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_duplicate_keys_name_the_occurrence_before() -> None:
    # Each repeat names the line of the one before it, in nested mappings and in a mapping
    # that also merges keys (a merged key is not a repeat).
    (doc,) = _parse("base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n  a: 1\n  a: 2\n  a:\n    k: 1\n    k: 2\n")
    assert [(p.rule, p.position, p.message.split(";")[0]) for p in doc.problems] == [
        ("yaml-duplicate-key", Position(6, 3), "key 'a' is repeated in this mapping (first at line 5)"),
        ("yaml-duplicate-key", Position(7, 3), "key 'a' is repeated in this mapping (first at line 6)"),
        ("yaml-duplicate-key", Position(9, 5), "key 'k' is repeated in this mapping (first at line 8)"),
    ]
    assert doc.data["m"] == {"x": 2, "a": {"k": 2}}
    assert doc.positions.key(("m", "a")) == Position(7, 3)


def test_repeated_keys_beside_an_inline_merge_in_a_text_with_no_anchor() -> None:
    # No `&` in the text: the walk keeps no table of the nodes it met, and a repeat is found
    # from the mapping's count of keys; a merged key (b, and a before it) is not a repeat.
    (doc,) = _parse("m:\n  <<: {a: 0, b: 1}\n  a: 1\n  a: 2\n  c: [x, {d: 1, d: 2}]\n")
    assert [(p.rule, p.position, p.message.split(";")[0]) for p in doc.problems] == [
        ("yaml-duplicate-key", Position(4, 3), "key 'a' is repeated in this mapping (first at line 3)"),
        ("yaml-duplicate-key", Position(5, 17), "key 'd' is repeated in this mapping (first at line 5)"),
    ]
    assert doc.data == {"m": {"a": 2, "b": 1, "c": ["x", {"d": 2}]}}
    assert doc.positions.key(("m", "c", 1, "d")) == Position(5, 17)

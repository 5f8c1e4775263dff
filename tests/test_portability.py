"""The parser's two paths give the same documents on every Python (issue 27).

`input/parse.py` composes with light nodes by naming them in ruamel.yaml.clib's C module (the
fast path), only where a self-check at first use saw that work; otherwise, and for any fault,
ruamel's own nodes from the public C parser are turned into the same light nodes (the
portable path). These tests hold the two paths to the same data, positions and problems on
every document of examples/, of ../shared/corpus, and on the YAML features the walker treats
apart (aliases, merges, tags, flow collections, repeated keys, faults).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CORPUS, EXAMPLES, requires_shared, run_cli

from kubegap_lint.input import parse
from kubegap_lint.input.scan import split_documents

TRICKY = [
    "a: &x {b: 1, c: [2, 3]}\nd: *x\ne:\n  <<: *x\n  b: 9\n",
    "base: &b\n  x: 1\nlist:\n  - <<: [*b, {y: 2}]\n    z: 3\n",
    "a: !!str 12\nb: !!int '7'\nc: !custom thing\nd: ! plain\ne: !!python/object/apply:os.system [x]\n",
    "a: [1, 'two', {three: 3}, [4]]\nb: {}\nc: []\nd:\ne: ~\n",
    "env: 1\nx: 2\nenv: 3\n",
    "? [complex, key]\n: value\n? {k: v}\n: other\n",
    "s: |\n  line one\n  line two\nf: >-\n  folded\n  text\n",
    "- a\n- - b\n  - c\n- d: e\n  f: g\n",
    "a: 'unclosed\n",
    "a: b: c\n",
    "just a scalar\n",
    "a: &r [*r]\n",
]


def _documents(text: str) -> Iterator[parse.ParsedDocument]:
    for chunk in split_documents(text.splitlines(True)):
        if chunk.has_content:
            yield parse.parse_chunk(chunk)


def _summary(doc: parse.ParsedDocument) -> tuple[object, ...]:
    index = doc.positions
    return (doc.data, doc.start, [(p.rule, p.message, p.position) for p in doc.problems],
            list(index.keys), list(index.numbers), index.offset, index.irregular)


def _both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], list[object]]:
    monkeypatch.setattr(parse, "_FAST", True)
    fast = [_summary(doc) for doc in _documents(text)]
    monkeypatch.setattr(parse, "_FAST", False)
    portable = [_summary(doc) for doc in _documents(text)]
    return fast, portable


def test_the_fast_path_takes_effect_on_this_python() -> None:
    # Not a requirement for correctness (the portable path gives the same output), but the speed
    # figures of bench/ assume it: a new ruamel.yaml.clib or Python that defeats it must be seen.
    parse._FAST = None
    assert parse.light_nodes_take_effect(), "the fast path is off: lints are correct but slower"


@pytest.mark.parametrize("text", TRICKY)
def test_both_paths_agree_on_yaml_features(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, portable = _both_ways(text, monkeypatch)
    assert fast == portable


def _yaml_files(top: Path) -> list[Path]:
    return sorted(p for p in top.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def test_both_paths_agree_on_every_example(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _yaml_files(EXAMPLES)
    assert len(files) > 50
    for path in files:
        fast, portable = _both_ways(path.read_text(encoding="utf-8"), monkeypatch)
        assert fast == portable, path


@requires_shared
def test_both_paths_agree_on_the_shared_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _yaml_files(CORPUS)
    assert len(files) > 500
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        fast, portable = _both_ways(text, monkeypatch)
        assert fast == portable, path


def test_a_fast_path_that_breaks_falls_back_to_the_same_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.13 broke the fast path once (a C callable's signature changed): the self-check
    must then choose the portable path, and the report must not change by a byte."""
    expected = run_cli("--format", "json", "--no-estimate", "examples/")
    assert expected.returncode == 1

    class Broken(parse._parser_class()):  # type: ignore[misc]
        __slots__ = ()

        @staticmethod
        def resolve(kind: object) -> None:  # one argument, as object.__subclasshook__ on 3.13
            return None

    real = parse._parser_class

    def parser_class(light: bool = True) -> type:
        return Broken if light else real(light=False)

    monkeypatch.setattr(parse, "_parser_class", parser_class)
    monkeypatch.setattr(parse, "_FAST", None)
    assert not parse.light_nodes_take_effect()
    from click.testing import CliRunner

    from kubegap_lint.cli.main import cli

    monkeypatch.chdir(EXAMPLES.parent)
    result = CliRunner().invoke(cli, ["--format", "json", "--no-estimate", "examples/"], prog_name="kubegap-lint")
    assert result.exit_code == 1
    assert result.stdout_bytes == expected.stdout

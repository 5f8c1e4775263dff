"""The node-by-node pass of the manifest fuzzer (tests/fuzz/mutate.py --nodes): each input is one
example document with exactly one node put to a value of another type, every node but the
document itself with every value once, in an order the seed decides."""

from __future__ import annotations

from ruamel.yaml import YAML

from tests.fuzz.mutate import MAX_DEPTH, WRONG_TYPES, WrongTypes

DOCUMENT = """apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      containers:
      - name: t
        image: x:1
"""


def _replaced(document, key, value):
    """The document with the node at key put to value, rebuilt without copying the rest."""
    if not key:
        return value
    head, rest = key[0], key[1:]
    if isinstance(document, dict):
        return {name: _replaced(item, rest, value) if name == head else item for name, item in document.items()}
    return [_replaced(item, rest, value) if index == head else item for index, item in enumerate(document)]


def test_every_node_below_the_top_gets_every_wrong_value_once(tmp_path) -> None:
    (tmp_path / "KG999-x").mkdir()
    (tmp_path / "KG999-x" / "bad.yaml").write_text(DOCUMENT)
    nested = "a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    (tmp_path / "KG999-x" / "deep.yaml").write_text(nested)  # left out: too deep to copy
    passes = WrongTypes(tmp_path, seed=1)
    original = YAML(typ="safe").load(DOCUMENT)
    # Every node but the document itself: apiVersion, kind, metadata, metadata.name, spec,
    # spec.template, its spec, containers, the container, its name and image: 11, each with
    # every value.
    assert len(passes.documents) == 1 and len(passes.places) == 11 * len(WRONG_TYPES)
    seen = set()
    while passes.places:
        _, key, value = passes.places[-1]  # the place input() takes next
        mutated = YAML(typ="safe").load(passes.input())
        assert mutated == _replaced(original, key, WRONG_TYPES[value]) != original
        seen.add((key, value))
    assert len(seen) == 11 * len(WRONG_TYPES)
    assert (("spec", "template", "spec", "containers", 0, "image"), WRONG_TYPES.index([])) in seen


def test_the_seed_decides_the_order(tmp_path) -> None:
    (tmp_path / "KG999-x").mkdir()
    (tmp_path / "KG999-x" / "bad.yaml").write_text(DOCUMENT)
    first, again, other = WrongTypes(tmp_path, 1), WrongTypes(tmp_path, 1), WrongTypes(tmp_path, 2)
    assert first.places == again.places
    assert first.places != other.places and sorted(first.places) == sorted(other.places)

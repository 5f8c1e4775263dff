"""core/record.py behaves as the dataclasses it replaced; core/digest.py gives hashlib's digests."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import pickle

import pytest

from kubegap_lint.core.digest import SMALL_BYTES, sha256
from kubegap_lint.core.model import Finding, Location, Position, Severity, Suppression
from kubegap_lint.core.record import FrozenInstanceError, field, fields, record, replace


@record(frozen=True, order=True)
class Pair:
    first: int
    second: str = "b"
    notes: list[str] = field(default_factory=list, compare=False)


@record
class Box:
    items: list[int] = field(default_factory=list)
    size: int = 0
    seen: int = field(default=0, init=False, repr=False)


def test_init_defaults_and_keywords() -> None:
    assert (Pair(1).first, Pair(1).second, Pair(1).notes) == (1, "b", [])
    assert Pair(1).notes is not Pair(1).notes  # a fresh list each
    assert Pair(second="x", first=2) == Pair(2, "x")
    with pytest.raises(TypeError):
        Pair()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Pair(1, "a", [], 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Pair(1, other=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Box(seen=1)  # type: ignore[call-arg]
    assert Box([1]).seen == 0


def test_eq_hash_order_repr() -> None:
    assert Pair(1, "a", ["x"]) == Pair(1, "a", ["y"])  # notes are not compared
    assert Pair(1) != Pair(2) and Pair(1) != (1, "b")
    assert hash(Pair(1, "a", ["x"])) == hash(Pair(1, "a"))
    assert sorted([Pair(2), Pair(1, "c"), Pair(1, "a")]) == [Pair(1, "a"), Pair(1, "c"), Pair(2)]
    assert Pair(1) < Pair(1, "c") and Pair(3) >= Pair(2)
    assert repr(Pair(1)) == "Pair(first=1, second='b', notes=[])"
    assert repr(Box([1], 2)) == "Box(items=[1], size=2)"
    with pytest.raises(TypeError):
        hash(Box())  # mutable and compared by value: unhashable, as a dataclass
    assert Box([1]) == Box([1]) and Box([1]) != Box([2])


def test_frozen_replace_fields_pickle() -> None:
    pair = Pair(1)
    with pytest.raises(FrozenInstanceError):
        pair.first = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del pair.second
    changed = replace(pair, second="z")
    assert (changed.first, changed.second, pair.second) == (1, "z", "b")
    with pytest.raises(TypeError):
        replace(pair, third=1)
    assert fields(Pair) == ("first", "second", "notes") and fields(Box) == ("items", "size", "seen")
    box = Box([1], 2)
    box.seen = 5
    assert replace(box, size=3).seen == 0  # not an argument: its default again, as dataclasses.replace
    for value in (pair, box, Position(3, 4), Location("a.yaml", 1, 2)):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value


def test_the_hand_written_inits_keep_the_fields() -> None:
    at = Location("a.yaml", 3, 4)
    assert (at.path, at.line, at.column, at.end_line, at.end_column) == ("a.yaml", 3, 4, None, None)
    assert Position(1, 2) < Position(1, 3) < Position(2, 1)
    assert hash(Location("a", 1, 2)) == hash(Location("a", 1, 2, None, None))


def test_a_finding_is_made_by_keyword_and_replaced() -> None:
    at = Location("a.yaml", 3, 4)
    finding = Finding(rule_id="KG101", rule_name="name", severity=Severity.WARNING, message="text", location=at,
                      evidence=("x",))
    assert finding.extra == {} and finding.evidence == ("x",) and finding.location is at
    with pytest.raises(TypeError):
        Finding("KG101", "name", Severity.WARNING, "text", at)  # type: ignore[misc]
    moved = dataclasses.replace(finding, location=Location("t.yaml", 1, 1), rendered_location=at)
    assert moved.rendered_location is at and moved.rule_id == "KG101" and moved.evidence == ("x",)
    assert replace(finding, message="other") == dataclasses.replace(finding, message="other")  # record's replace too
    assert finding == dataclasses.replace(finding, extra={"other": 1})  # extra is not compared
    assert hash(finding) == hash(dataclasses.replace(finding, extra={"other": 1}))
    assert finding != dataclasses.replace(finding, suppression=Suppression("inline", "why"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.message = "changed"  # type: ignore[misc]
    assert not hasattr(finding, "__dict__")  # slots: no attribute dict a finding
    assert pickle.loads(pickle.dumps(finding)) == finding and copy.deepcopy(finding) == finding
    assert Position(1, 2) < Position(1, 3) < Position(2, 1)
    assert hash(Location("a", 1, 2)) == hash(Location("a", 1, 2, None, None))


@pytest.mark.parametrize("size", [0, 1, 1000, SMALL_BYTES - 1, SMALL_BYTES, SMALL_BYTES + 7])
def test_digest_is_sha256(size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    streamed = sha256(size=size)
    for start in range(0, size, 65536):
        streamed.update(data[start : start + 65536])
    assert streamed.hexdigest() == hashlib.sha256(data).hexdigest()

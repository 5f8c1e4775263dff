"""GitHub's primaryLocationLineHash, reproduced: it must equal what upload-sarif computes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubegap_lint.report.linehash import line_hashes

# Test vectors published with github/codeql-action (src/fingerprints.test.ts, test "hash"):
# the hashes its upload step computes for these inputs, one per line.
CODEQL_ACTION_VECTORS = [
    ("", ["c129715d7a2bc9a3:1"]),
    (" a\nb\n  \t\tc\n d", ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]),
    (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
     ["8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1",
      "b86d3392aea1be30:1", "e6ceba753e1a442:1"]),
]
WITH_FINAL_BREAK = ["e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1",
                    "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1"]
LINE_BREAK_VARIANTS = [
    " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
    " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
    " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
    " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n",
]
REPEATED = ["a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3", "a7f2ff13bc495cf2:4",
            "a7f2ff13bc495cf2:5", "a7f2ff13bc495cf2:6", "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1",
            "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1", "c129715d7a2bc9a3:1"]


def test_matches_codeql_action_vectors() -> None:
    for text, expected in CODEQL_ACTION_VECTORS:
        assert line_hashes(text) == expected, repr(text)
    for text in LINE_BREAK_VARIANTS:
        assert line_hashes(text) == WITH_FINAL_BREAK, repr(text)
    assert line_hashes("Lorem ipsum dolor sit amet.\n" * 10) == REPEATED


def test_lines_inserted_above_keep_the_hash_and_editing_the_line_changes_it() -> None:
    text = "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers: []\n"
    hashes = line_hashes(text)
    shifted = line_hashes("# a comment\n# another\n" + text)
    assert shifted[2:] == hashes
    edited = line_hashes(text.replace("containers: []", "containers: [x]"))
    assert edited[5] != hashes[5] and edited[0] != hashes[0]  # the window reaches 100 units ahead


@given(st.text(alphabet=st.sampled_from("ab \t\r\n\u00e9\U0001f600:"), max_size=300))
def test_one_hash_per_line_and_whitespace_does_not_count(text: str) -> None:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert len(line_hashes(text)) == len(lines)
    if "\r" not in text:  # ("\r \n" is two breaks, "\r\n" one: the space splits the pair)
        assert line_hashes(text.replace(" ", "").replace("\t", "")) == line_hashes(text)


# Lines that repeat, lines longer than a window (alone and sharing their first 100 units), CRs,
# tabs, characters past U+FFFF (two UTF-16 units) and U+FFFF itself (the end marker's value).
HASH_LINES = st.sampled_from([
    "a: 1", "a: 1", "  a:\t1", "", "spec:", "- name: x", "x" * 99, "x" * 100, "x" * 100 + "y",
    "x" * 100 + "z", "\U0001f600 b", "\uffff", "c\r", "d\r\n", "\t",
])


@given(st.lists(HASH_LINES, max_size=30), st.booleans(), st.sets(st.integers(min_value=0, max_value=35)))
def test_hashes_of_announced_lines_are_the_full_counts(lines: list[str], final: bool, wanted: set[int]) -> None:
    from kubegap_lint.report.linehash import LineHashes

    text = "\n".join(lines) + ("\n" if final else "")
    full = LineHashes(text)
    announced = LineHashes(text, wanted)
    for number in sorted(wanted):  # announced lines, and past the end
        assert announced.line(number) == full.line(number), (text, number)
    assert [LineHashes(text, wanted).line(n) for n in range(len(full) + 2)] == [  # and any other
        full.line(n) for n in range(len(full) + 2)]

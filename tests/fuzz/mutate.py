"""Mutation fuzzing over ../shared/corpus: many small hostile inputs a second, in one process.

    nice -n 15 python tests/fuzz/mutate.py --inputs 100000 --seed 1 --artifacts /tmp/kubegap-mutate

The atheris harness (fuzz_lint.py) runs 9 to 30 inputs a second: coverage instrumentation of
every module, and the inputs it grows get large. This one keeps the same promises
(harness.check) at a few milliseconds an input: one warm linter with every policy, tiny inputs
(one to three documents of the corpus, each at most MAX_PIECE bytes), and mutations chosen for
YAML and manifests (hostile scalars and numbers, indentation, markers, anchors, encodings,
tags, nested Lists, template text) besides byte flips and splices. Each input is linted as a
file and rendered as text, JSON and github annotations, one in 25 as SARIF too.

A failure is any of: an exception out of lint or render (a run without a report), a promise
of harness.check broken, or an input error that says "internal error" or that a built-in
policy "could not be evaluated" (the run loop turns a bug met by one document into such an
error so that the rest is still reported: here it counts as the bug it is). Each failing input
is saved in --artifacts with its traceback. Seeded: the same seed gives the same inputs.
The summary (JSON, last line) says what was covered: rules fired, exit codes, input errors.
Not part of the test suite; figures in docs/robustness.md.

`--nodes` replaces the random mutations with a systematic pass: every node of every example
manifest (examples/, the must and must-not cases of each rule) put in place, one at a time, by
each value of WRONG_TYPES, in an order the seed shuffles (95,796 inputs on 3 December). Random
mutations reach a field a policy reads with a list or a number there once in tens of thousands
of inputs; this pass reaches each of them.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

CORPUS = REPO.parent / "shared" / "corpus"
MAX_PIECE = 3000  # bytes of one document taken from the corpus: small inputs are fast inputs
SUFFIXES = (".yaml", ".yml", ".json")

# Text a mutation inserts or puts in place of a scalar.
TOKENS = [
    b"---\n", b"...\n", b"- ", b": ", b"? ", b"&a ", b"*a", b"<<: *a\n", b"!!python/object/apply:os.system ",
    b"!Ref ", b"!!binary ", b"%YAML 1.1\n", b"{{ .Values.x }}", b"{{- include \"x\" . }}", b"#", b"# kubegap:ignore",
    b"# kubegap:ignore=KG201\n", b"\t", b"\r", b"\r\n", b"\x00", b"\xff", b"\xc3", b"\xef\xbb\xbf", b"\xe2\x80\xae",
    b"\xe2\x80\x8b", "🙂".encode(), b"\x1b[31m", b"::error::", b"[text](http://x)", b"[", b"]", b"{", b"}",
    b"'", b'"', b"|", b">-", b"\\", b"\\ud800", b"\"\\ud800\"", b"~", b"null", b"yes", b"0x1F", b"0o17", b"1e309",
    b"-0", b".inf", b"9" * 40, b"9" * 400, b"1_000", b"2Gi", b"1.5e3m", b"100Ki", b"-1", b"nvidia.com/gpu: ",
    b"amd.com/gpu: 8", b"kind: List\nitems:\n", b"apiVersion: v1\n", b"kind: ", b"metadata:\n  name: ",
    b"replicas: ", b"parallelism: ", b"completions: ", b"restartPolicy: Never\n", b"backoffLimit: ",
    b"[" * 60, b"]" * 60, b"- " * 30, b"a" * 300, b"name: " + b"x" * 300, b"\xf0\x9f", b"\x85", b"\xe2\x80\xa8",
]
VALUES = [
    b"0", b"1", b"-1", b"8", b"9" * 400, b"0x10", b"0o10", b"1e309", b"-.inf", b".nan", b"true", b"no", b"~", b"",
    b"''", b'""', b"[]", b"{}", b"[1, 2]", b"{a: 1}", b"*a", b"&a x", b"!!int 5", b"!!str 5", b"|\n  x\n", b">\n  y\n",
    b"2Gi", b"500m", b"1.5", b"1e3", b"\"\\u202e\"", b"\"\\x1b[1m\"", b"1Ei", b"99999999999999999999Gi",
    "é🙂".encode(), b"\xff\xfe", b"{{ .Values.gpus }}",
]


def corpus_pieces(roots: list[Path]) -> list[bytes]:
    """Documents (split at `---` lines) of every manifest file under roots, small ones only."""
    pieces: list[bytes] = []
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if root.is_dir() and path.suffix not in SUFFIXES and path.parent.name != "seeds":
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            for piece in re.split(rb"(?m)^---[ \t]*\r?\n", data):
                if piece.strip() and len(piece) <= MAX_PIECE:
                    pieces.append(piece)
    return pieces


class Mutator:
    def __init__(self, pieces: list[bytes], seed: int) -> None:
        self.pieces = pieces
        self.random = random.Random(seed)

    def input(self) -> bytes:
        rnd = self.random
        data = b"---\n".join(rnd.choice(self.pieces) for _ in range(rnd.choice((1, 1, 1, 2, 3))))
        for _ in range(rnd.choice((0, 1, 1, 2, 2, 3, 4, 6))):
            data = rnd.choice(self.MUTATIONS)(self, data)
        return data[: 4 * MAX_PIECE]

    # Each mutation takes and gives bytes.
    def _at(self, data: bytes) -> int:
        return self.random.randrange(len(data) + 1)

    def _line_start(self, data: bytes) -> int:
        starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]
        return self.random.choice(starts)

    def flip(self, data: bytes) -> bytes:
        if not data:
            return data
        at = self.random.randrange(len(data))
        return data[:at] + bytes([self.random.randrange(256)]) + data[at + 1:]

    def delete(self, data: bytes) -> bytes:
        at = self._at(data)
        return data[:at] + data[at + self.random.randrange(1, 65):]

    def duplicate(self, data: bytes) -> bytes:
        at = self._at(data)
        part = data[at: at + self.random.randrange(1, 200)]
        return data[:at] + part * self.random.choice((2, 2, 3, 20)) + data[at + len(part):]

    def insert(self, data: bytes) -> bytes:
        at = self._line_start(data) if self.random.random() < 0.5 else self._at(data)
        return data[:at] + self.random.choice(TOKENS) + data[at:]

    def value(self, data: bytes) -> bytes:
        spots = [m.end() for m in re.finditer(rb": ", data)]
        if not spots:
            return data
        at = self.random.choice(spots)
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        return data[:at] + self.random.choice(VALUES) + data[end:]

    def lines(self, data: bytes) -> bytes:
        lines = data.splitlines(True)
        if len(lines) < 2:
            return data
        i, j = self.random.randrange(len(lines)), self.random.randrange(len(lines))
        choice = self.random.randrange(4)
        if choice == 0:
            lines[i], lines[j] = lines[j], lines[i]
        elif choice == 1:
            del lines[i]
        elif choice == 2:
            lines.insert(i, lines[j])
        else:
            lines[i] = self.random.choice((b"", b" ", b"  ", b"\t", b"- ")) + lines[i].lstrip(b" ")
        return b"".join(lines)

    def splice(self, data: bytes) -> bytes:
        other = self.random.choice(self.pieces)
        a, b = self._at(data), self.random.randrange(len(other) + 1)
        return data[:a] + other[b:]

    def truncate(self, data: bytes) -> bytes:
        return data[: self._at(data)]

    def wrap_list(self, data: bytes) -> bytes:
        body = b"".join(b"  " + line for line in data.splitlines(True))
        return b"apiVersion: v1\nkind: List\nitems:\n- \n" + body

    def encode(self, data: bytes) -> bytes:
        text = data.decode("utf-8", "replace")
        return ("\ufeff" + text).encode(self.random.choice(("utf-16-le", "utf-16-be", "utf-32-le", "utf-8")))

    MUTATIONS = [flip, delete, duplicate, insert, insert, value, value, lines, lines, splice, truncate,
                 wrap_list, encode]


# Values put in place of each node by --nodes: the API server would refuse most of them where
# they land, and a rule must still give a finding or nothing, never fail.
WRONG_TYPES: list[Any] = [[], {}, "x", 7, float("-inf"), True, None, [{"a": 1}], "8Gi"]
MAX_NODES = 3000  # nodes of one example document: KG004's and KG007's bombs are not walked
MAX_DEPTH = 60  # nor the deep nesting examples (a copy of them would exhaust the recursion)


class WrongTypes:
    """Each example document with one node replaced by a value of another type (--nodes)."""

    def __init__(self, folder: Path, seed: int) -> None:
        from ruamel.yaml import YAML

        loader = YAML(typ="safe")
        self.documents: list[Any] = []
        places: list[tuple[int, tuple[Any, ...], int]] = []
        for path in sorted(folder.glob("KG*/*.yaml")):
            try:
                loaded = [d for d in loader.load_all(path.read_bytes()) if isinstance(d, dict)]
            except Exception:  # noqa: BLE001 - the input-fault examples (KG001-KG007) do not load
                continue
            for document in loaded:
                keys = list(itertools.islice(_node_keys(document), MAX_NODES + 1))  # an alias bomb never ends
                if len(keys) > MAX_NODES or max(map(len, keys)) > MAX_DEPTH:
                    continue
                self.documents.append(document)
                places += [(len(self.documents) - 1, key, value)
                           for key in keys[1:] for value in range(len(WRONG_TYPES))]
        random.Random(seed).shuffle(places)
        self.places = places
        self.dumper = YAML(typ="safe")
        self.dumper.default_flow_style = False

    def input(self) -> bytes:
        import copy
        import io

        number, key, value = self.places.pop()
        document = copy.deepcopy(self.documents[number])
        node = document
        for step in key[:-1]:
            node = node[step]
        node[key[-1]] = copy.deepcopy(WRONG_TYPES[value])
        out = io.StringIO()
        self.dumper.dump(document, out)
        return out.getvalue().encode()


def _node_keys(value: Any) -> Iterator[tuple[Any, ...]]:
    """The key path of every node under value, value's own first (a stack, not recursion: the
    hostile examples nest deeper than Python recurses)."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        key, node = stack.pop()
        yield key
        if isinstance(node, dict):
            stack.extend(((*key, name), item) for name, item in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*key, index), item) for index, item in reversed(list(enumerate(node))))


BUG_SIGNS = ("internal error", "could not be evaluated")


def run_one(linter, data: bytes, folder: str, sarif: bool) -> tuple[object, list[str]]:
    """harness.check (text and JSON), then github and SARIF as the CLI renders them; the bugs
    that input errors hide.
    SARIF costs ten times the lint (its rules section, gzip size), so only when asked."""
    from kubegap_lint.report.formats import ReportOptions, render
    from tests.fuzz.harness import check

    result = check(linter, data, folder)  # renders text and JSON
    options = ReportOptions(params=linter.params, sarif_root=folder)
    for fmt in ("github", "sarif") if sarif else ("github",):
        report = render(fmt, result, options)
        text = "".join(report.pieces)
        if fmt in ("json", "sarif"):
            json.loads(text)
    bugs = [e.message for e in result.errors if any(sign in e.message for sign in BUG_SIGNS)]
    return result, bugs


def _peak_mib() -> int:
    """This process's peak resident size (scripts/fuzz.sh holds it under 1 GiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no limit)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, action="append", help="default: ../shared/corpus and the seeds")
    parser.add_argument("--artifacts", type=Path, default=Path(tempfile.gettempdir()) / "kubegap-mutate")
    parser.add_argument("--progress", type=int, default=10_000)
    parser.add_argument("--sarif-every", type=int, default=25, help="render SARIF for one input in N")
    parser.add_argument("--nodes", action="store_true",
                        help="every node of the examples replaced by each value of another type (WrongTypes)")
    args = parser.parse_args()

    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    mutator: Mutator | WrongTypes
    if args.nodes:
        mutator = WrongTypes(REPO / "examples", args.seed)
        sources = len(mutator.documents)
        args.inputs = min(args.inputs, len(mutator.places))
    else:
        roots = args.corpus or [CORPUS, REPO / "tests" / "fuzz" / "seeds"]
        pieces = corpus_pieces(roots)
        if not pieces:
            print(f"no documents under {roots}", file=sys.stderr)
            return 2
        mutator = Mutator(pieces, args.seed)
        sources = len(pieces)
    args.artifacts.mkdir(parents=True, exist_ok=True)
    linter = Linter(Settings(select=[p.id for p in Linter().catalog.policies]))
    # Each input is written to a file and read back: on a busy disk that took 2 ms, on tmpfs 0.25.
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    folder = tempfile.mkdtemp(prefix="kubegap-mutate-", dir=memory)
    # Run where nothing else is: a `# Source:` header makes the run look for its chart from here,
    # and the repository's example chart would turn the walk into most of the time.
    os.chdir(folder)
    # The github format asks git for the repository's top at every render (a process each
    # time, half the cost of an input here): the fuzz folder is the top, once and for all.
    import kubegap_lint.report.github as github

    github.default_root = lambda: Path(folder)  # type: ignore[assignment]
    started = time.monotonic()
    done = failures = 0
    exits: Counter[int] = Counter()
    rules: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    sizes = 0
    while done < args.inputs and not (args.seconds and time.monotonic() - started > args.seconds):
        data = mutator.input()
        sizes += len(data)
        try:
            result, bugs = run_one(linter, data, folder, sarif=done % args.sarif_every == 0)
        except BaseException as exc:  # noqa: BLE001 - every escape is what is looked for
            if isinstance(exc, KeyboardInterrupt):
                break
            bugs = [traceback.format_exc()]
            result = None
        done += 1
        if bugs:
            failures += 1
            name = hashlib.sha1(data).hexdigest()[:16]
            (args.artifacts / f"input-{name}.yaml").write_bytes(data)
            (args.artifacts / f"input-{name}.txt").write_text("\n".join(bugs))
            if failures <= 20:  # the rest are counted, and saved
                print(f"input {done}: FAILED, saved as input-{name}.yaml: {bugs[0].splitlines()[-1][:200]}",
                      flush=True)
        if result is not None:
            exits[result.exit_code(linter.settings.fail_on)] += 1  # type: ignore[attr-defined]
            rules.update({f.rule_id for f in result.findings})  # type: ignore[attr-defined]
            errors.update({e.message.split(":")[0][:40] for e in result.errors})  # type: ignore[attr-defined]
        if args.progress and done % args.progress == 0:
            rate = done / (time.monotonic() - started)
            print(f"{done} inputs, {failures} failures, {rate:.0f} inputs/s", flush=True)
    seconds = time.monotonic() - started
    os.chdir(REPO)
    shutil.rmtree(folder, ignore_errors=True)
    summary = {
        "inputs": done, "failures": failures, "seconds": round(seconds), "inputs_per_second": round(done / seconds, 1),
        "seed": args.seed, "sarif_rendered": (done + args.sarif_every - 1) // args.sarif_every, ("example_documents" if args.nodes else "corpus_documents"): sources, "mean_input_bytes": round(sizes / max(done, 1)),
        "exit_codes": dict(sorted(exits.items())), "inputs_with_rule": dict(sorted(rules.items())),
        "inputs_with_input_error": dict(errors.most_common(12)),
        "peak_mib_this_process": _peak_mib(),
    }
    print(json.dumps(summary, sort_keys=True))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

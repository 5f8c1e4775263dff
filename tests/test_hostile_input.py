"""Hostile and broken input (issue 5, docs/robustness.md): every input is answered with
findings or a one-line error naming its place, in bounded time, and nothing is written."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

GPU_JOB = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\ndata:\n  a: '1'\n"


def lint(linter_factory, tmp_path: Path, content: bytes | str, name: str = "in.yaml",
         select: tuple[str, ...] | None = None):
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return linter_factory(select).lint_paths([str(path)])


def rules_at(result) -> list[tuple[str, int]]:
    return [(f.rule_id, f.location.line) for f in result.findings]


# --- broken YAML: one KG001 at the right line, the rest still linted ----------------------

BROKEN = {
    "bad indentation": ("a:\n  b: 1\n c: 2\n", 3),
    "unclosed quote": ('a: "open\nb: 2\n', 1),
    "unclosed flow": ("a: [1, 2\nb: 3\n", 2),  # where the parser finds what cannot follow
    "tab indentation": ("a:\n\tb: 1\n", 2),
    "NUL byte": ("a: 1\nb: x\x00y\n", 2),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_document_fails_alone(case: str, linter_factory, tmp_path: Path) -> None:
    text, line = BROKEN[case]
    stream = CONFIG_MAP + "---\n" + text + "---\n" + GPU_JOB
    result = lint(linter_factory, tmp_path, stream)
    first_line = CONFIG_MAP.count("\n") + 2
    kg001 = [(r, n) for r, n in rules_at(result) if r == "KG001"]
    assert kg001 == [("KG001", first_line + line - 1)], (case, rules_at(result))
    assert ("KG201", first_line + text.count("\n") + 1 + 8) in rules_at(result)  # the job after it
    assert result.stats.resources == 2 and not result.errors


def test_stray_document_marker_inside_a_block_scalar_splits_there(linter_factory, tmp_path: Path) -> None:
    # `---` at column 0 ends a document even inside a block scalar (YAML says so); the
    # indented remainder is then a broken document of its own, reported, not a crash.
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  k: |\n    x\n---\n    more: [\n"
    result = lint(linter_factory, tmp_path, text)
    assert result.stats.resources == 1
    assert [r for r, _ in rules_at(result)] == ["KG001"]
    assert rules_at(result)[0][1] in (9, 10)


def test_comment_only_bom_and_crlf(linter_factory, tmp_path: Path) -> None:
    only_comment = lint(linter_factory, tmp_path, "# nothing here\n# at all\n", "c.yaml")
    assert only_comment.findings == [] and only_comment.stats.resources == 0
    crlf = GPU_JOB.replace("\n", "\r\n").encode()
    bom = lint(linter_factory, tmp_path, b"\xef\xbb\xbf" + crlf, "bom.yaml")
    plain = lint(linter_factory, tmp_path, GPU_JOB, "plain.yaml")
    assert rules_at(bom) == rules_at(plain) and rules_at(plain)
    utf16 = lint(linter_factory, tmp_path, "\ufeff".encode("utf-16-le") + GPU_JOB.encode("utf-16-le"), "u16.yaml")
    assert rules_at(utf16) == rules_at(plain)


def test_invalid_and_mixed_encodings_name_the_line(linter_factory, tmp_path: Path) -> None:
    latin1 = CONFIG_MAP.encode() + b"---\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: caf\xe9}\n---\n" + GPU_JOB.encode()
    result = lint(linter_factory, tmp_path, latin1)
    assert ("KG001", 10) in rules_at(result)
    assert any(f.rule_id == "KG201" for f in result.findings)
    message = next(f.message for f in result.findings if f.rule_id == "KG001")
    assert "UTF-8" in message


def test_binary_file_named_yaml(linter_factory, tmp_path: Path) -> None:
    blob = bytes(range(256)) * 64
    result = lint(linter_factory, tmp_path, blob, "blob.yaml")
    lines = blob.count(b"\n") + 1
    assert result.findings and all(f.rule_id == "KG001" for f in result.findings)
    assert all(1 <= f.location.line <= lines for f in result.findings)


def test_odd_line_breaks_do_not_shift_lines(linter_factory, tmp_path: Path) -> None:
    # NEL and the Unicode separators are not line ends for editors, grep or git.
    plain = lint(linter_factory, tmp_path, GPU_JOB, "plain.yaml")
    odd = lint(linter_factory, tmp_path, "# a \u2028 c \x85 d\n" + GPU_JOB, "odd.yaml")
    assert [(r, n + 1) for r, n in rules_at(plain)] == rules_at(odd)
    # A form feed is no line end either; in a value it is a character YAML refuses.
    feed = lint(linter_factory, tmp_path, "x: a\x0cb\n---\n" + GPU_JOB, "feed.yaml")
    assert rules_at(feed) == [("KG001", 1)] + [(r, n + 2) for r, n in rules_at(plain)]


def test_error_at_end_without_final_newline_is_on_the_last_line(linter_factory, tmp_path: Path) -> None:
    result = lint(linter_factory, tmp_path, "a: 1\nb: [1,\n  2,")
    assert rules_at(result) == [("KG001", 3)]


# --- aliases -------------------------------------------------------------------------

def test_billion_laughs_is_refused_fast(linter_factory, tmp_path: Path) -> None:
    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 12):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        levels.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n" + "".join(f"  {level}\n" for level in levels)
    start = time.perf_counter()
    result = lint(linter_factory, tmp_path, text + "---\n" + GPU_JOB)
    assert time.perf_counter() - start < 10  # generous: the real figure is in docs/robustness.md
    assert ("KG004", 1) in rules_at(result)
    assert any(f.rule_id == "KG201" for f in result.findings)


def test_recursive_alias_is_refused(linter_factory, tmp_path: Path) -> None:
    result = lint(linter_factory, tmp_path, "a: &a [1, *a]\n---\n" + CONFIG_MAP)
    assert [r for r, _ in rules_at(result)] == ["KG004"]
    assert "contains it" in result.findings[0].message and result.stats.resources == 1


def test_merge_keys_still_work_and_point_at_real_lines(linter_factory, tmp_path: Path) -> None:
    text = GPU_JOB.replace("    spec:\n      restartPolicy: OnFailure\n",
                           "    spec:\n      <<: &pod {restartPolicy: OnFailure}\n")
    assert text != GPU_JOB
    result = lint(linter_factory, tmp_path, text)
    assert rules_at(result) == rules_at(lint(linter_factory, tmp_path, GPU_JOB, "b.yaml"))


# --- depth and size ------------------------------------------------------------------

@pytest.mark.parametrize("shape", ["flow", "flow-map", "block-map", "block-seq"])
def test_ten_thousand_levels_are_refused_not_crashed(shape: str, linter_factory, tmp_path: Path) -> None:
    depth = 10_000
    body = {
        "flow": "a: " + "[" * depth + "]" * depth + "\n",
        "flow-map": "a: " + "{a: " * depth + "1" + "}" * depth + "\n",
        "block-map": "".join(" " * i + "a:\n" for i in range(depth)) + " " * depth + "b: 1\n",
        "block-seq": "".join(" " * i + "-\n" for i in range(depth)) + " " * depth + "x\n",
    }[shape]
    start = time.perf_counter()
    result = lint(linter_factory, tmp_path, body + "---\n" + GPU_JOB)
    assert time.perf_counter() - start < 30
    assert [r for r, _ in rules_at(result) if r.startswith("KG00")] == ["KG007"]
    assert any(f.rule_id == "KG201" for f in result.findings)


def test_a_hundred_thousand_levels_do_not_crash_the_process(tmp_path: Path) -> None:
    # Past ~50,000 levels the C composer overflowed the C stack (a segmentation fault).
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    proc = run_cli("--format", "json", str(path))
    assert proc.returncode == 1, proc.stderr.decode()
    assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["KG007"]


def test_data_at_the_depth_limit_goes_through_views_jmespath_and_reports(linter_factory, tmp_path: Path) -> None:
    from kubegap_lint.input.limits import MAX_DEPTH
    from kubegap_lint.report.jsonfmt import render_json
    from kubegap_lint.report.text import render_text

    linter = linter_factory(None)
    deep = "[" * (MAX_DEPTH - 10) + "]" * (MAX_DEPTH - 10)
    places = ["name: trainer", "image: registry.example/finetune:2", "nvidia.com/gpu: 1", "restartPolicy: OnFailure"]
    for place in places:
        key = place.split(":")[0]
        text = GPU_JOB.replace(place, f"{key}: {deep}") + "\n    env: [{name: X, value: " + deep + "}]\n"
        result = linter.lint_texts([("deep.yaml", text)])
        assert not result.errors, (place, result.errors)
        json.loads(render_json(result, linter.params))
        render_text(result, params=linter.params)


def test_document_over_the_size_limit_is_refused(linter_factory, tmp_path: Path, monkeypatch) -> None:
    from kubegap_lint.input import scan
    monkeypatch.setattr(scan, "MAX_DOCUMENT_CHARS", 1000)
    monkeypatch.setattr(scan.split_documents, "__defaults__", (1000,))
    monkeypatch.setattr(scan.split_texts, "__defaults__", (1000,))
    big = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n" + "".join(f"  k{i}: v\n" for i in range(200))
    result = lint(linter_factory, tmp_path, CONFIG_MAP + "---\n" + big + "---\n" + GPU_JOB)
    marker = CONFIG_MAP.count("\n") + 1  # the document's `---` line
    assert ("KG007", marker) in rules_at(result)
    assert "MiB" in next(f.message for f in result.findings if f.rule_id == "KG007")
    assert any(f.rule_id == "KG201" for f in result.findings)


def test_the_real_size_limit_is_documented() -> None:
    from kubegap_lint.input.limits import MAX_DEPTH, MAX_DOCUMENT_CHARS

    doc = (Path(__file__).parent.parent / "docs" / "robustness.md").read_text()
    assert f"{MAX_DOCUMENT_CHARS // 2**20} MiB" in doc and f"{MAX_DEPTH} levels" in doc


# --- unsafe tags ---------------------------------------------------------------------

def test_python_tags_are_never_constructed(linter_factory, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = GPU_JOB.replace("name: finetune", f"name: !!python/object/apply:os.system ['touch {marker}']")
    text += "---\n!Ref\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: !Sub x}\n"
    result = lint(linter_factory, tmp_path, text)
    assert not marker.exists()
    assert result.stats.resources == 2 and not result.errors
    assert any(f.rule_id == "KG201" for f in result.findings)


# --- files ---------------------------------------------------------------------------

def test_unreadable_file_is_reported_and_the_rest_linted(linter_factory, tmp_path: Path, monkeypatch) -> None:
    # Tests run as root, who can read anything: simulate the permission error at open().
    (tmp_path / "a.yaml").write_text(GPU_JOB)
    (tmp_path / "b.yaml").write_text(GPU_JOB)
    from kubegap_lint.core import safefile

    real_open = safefile.open_regular

    def deny(path, *args, **kwargs):
        if str(path).endswith("a.yaml"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(safefile, "open_regular", deny)
    result = linter_factory(None).lint_paths([str(tmp_path)])
    assert [(e.path.endswith("a.yaml"), e.message) for e in result.errors] == [(True, "cannot be read: Permission denied")]
    assert {Path(f.location.path).name for f in result.findings} == {"b.yaml"}
    assert result.exit_code(linter_factory(None).settings.fail_on) == 2


def test_unreadable_folder_is_reported(tmp_path: Path, monkeypatch) -> None:
    from kubegap_lint.input import sources
    (tmp_path / "locked").mkdir()
    (tmp_path / "ok.yaml").write_text(CONFIG_MAP)
    real_scandir = os.scandir

    def deny(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(sources.os, "scandir", deny)
    found, errors = sources.discover([str(tmp_path)])
    assert [Path(s.display).name for s in found] == ["ok.yaml"]
    assert [(Path(e.path).name, e.message) for e in errors] == [("locked", "cannot be read: Permission denied")]


def test_file_vanishing_during_the_run(linter_factory, tmp_path: Path) -> None:
    from kubegap_lint.input.sources import discover

    (tmp_path / "gone.yaml").write_text(GPU_JOB)
    (tmp_path / "stays.yaml").write_text(GPU_JOB)
    found, errors = discover([str(tmp_path)])
    (tmp_path / "gone.yaml").unlink()
    result = linter_factory(None).lint_sources(found, errors)
    assert [e.message for e in result.errors] == ["cannot be read: No such file or directory"]
    assert {Path(f.location.path).name for f in result.findings} == {"stays.yaml"}


def test_special_files_by_name_and_in_a_walk(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "dev.yaml").symlink_to("/dev/zero")
    (tmp_path / "ok.yaml").write_text(CONFIG_MAP)
    proc = run_cli(str(tmp_path / "pipe.yaml"), "/dev/null", str(tmp_path))
    assert proc.returncode == 2
    err = proc.stderr.decode().splitlines()
    assert len(err) == 2 and all("not a regular file" in line for line in err)
    assert "1 file," in proc.stdout.decode()


@pytest.mark.slow
def test_a_folder_of_twenty_thousand_files(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(20_000):
        (folder / f"f{i:05d}.yaml").write_text("a: 1\n")
    proc = run_cli("--format", "json", str(folder))
    assert proc.returncode == 0, proc.stderr.decode()[-500:]
    assert json.loads(proc.stdout)["summary"]["files"] == 20_000


@pytest.mark.parametrize("budget", [0, 2_500, 40_000])
def test_streaming_spilled_workloads_find_the_same(linter_factory, tmp_path: Path, monkeypatch, budget: int) -> None:
    # Past the budget, workloads are spilled and read back at the end; the findings must not
    # change, wherever the budget runs out (before the first workload, inside a List, half-way).
    from kubegap_lint.input import stream
    items = "".join("  - " + GPU_JOB.replace("name: train", f"name: train-{n}").replace("\n", "\n    ").rstrip()
                    + "\n" for n in range(3))
    (tmp_path / "list.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + items, encoding="utf-8")
    paths = [str(tmp_path / "list.yaml"), str(EXAMPLES)]
    linter = linter_factory(None)
    kept = linter.lint_paths(paths, keep_views=True)
    monkeypatch.setattr(stream.PendingWorkloads.__init__, "__defaults__", (budget,))
    reread = linter.lint_paths(paths, keep_views=True)
    assert reread.findings == kept.findings
    assert reread.views == kept.views and reread.estimates == kept.estimates
    assert kept.workloads == reread.workloads > 5
    assert len([f for f in kept.findings if f.location.path.endswith("list.yaml")]) >= 3


# --- strings that reach the terminal -------------------------------------------------

def test_control_characters_are_escaped_in_text_and_json_stays_valid(tmp_path: Path) -> None:
    name = '"evil\\e]0;title\\a\\e[2J\\x9b31m"'
    path = tmp_path / "x.yaml"
    path.write_text(GPU_JOB.replace("name: finetune", f"name: {name}"))
    out = run_cli("--no-color", str(path)).stdout.decode("utf-8")
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b]0;title" in out
    proc = run_cli("--format", "json", str(path))
    assert proc.stdout.isascii()
    assert json.loads(proc.stdout)["findings"][0]["resource"]["name"] == "evil\x1b]0;title\x07\x1b[2J\x9b31m"


def test_lone_surrogates_in_escapes_are_a_syntax_error(linter_factory, tmp_path: Path) -> None:
    result = lint(linter_factory, tmp_path, 'a: "\\ud800"\n---\n' + CONFIG_MAP)
    assert rules_at(result) == [("KG001", 1)] and result.stats.resources == 1


def test_file_names_with_control_bytes_and_bad_utf8(tmp_path: Path) -> None:
    # os.fsdecode turns bytes that are not UTF-8 into lone surrogates: they reach the reports.
    folder = os.fsencode(tmp_path)
    with open(os.path.join(folder, b"bad\xff\x1b[31m.yaml"), "wb") as handle:
        handle.write(GPU_JOB.encode())
    os.mkfifo(os.path.join(folder, b"pipe\x1b[2J\xfe.yaml"))
    text = run_cli("--no-color", str(tmp_path), os.fsdecode(os.path.join(folder, b"pipe\x1b[2J\xfe.yaml")))
    assert text.returncode == 2, text.stderr
    for stream in (text.stdout, text.stderr):
        assert b"\x1b" not in stream
    assert b"\\udcff\\x1b[31m.yaml" in text.stdout and b"\\x1b[2J\\udcfe" in text.stderr
    proc = run_cli("--format", "json", str(tmp_path))
    assert proc.stdout.isascii()
    paths = {f["location"]["path"] for f in json.loads(proc.stdout)["findings"]}
    assert paths == {os.path.join(str(tmp_path), "bad\udcff\x1b[31m.yaml")}


# --- policies and configuration ------------------------------------------------------

POLICY = """id: KG900
name: test-policy
title: A test policy
severity: warning
precision: high
applies_to: "`true`"
violation: VIOLATION
message: "a message"
evidence: [pytorch-dataloader-shm-k8s]
help: |
  Help.
"""


def load_with(tmp_path: Path, violation: str, params: dict | None = None):
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    (tmp_path / "KG900-test-policy.yaml").write_text(POLICY.replace("VIOLATION", violation))
    return Linter(Settings(policy_dirs=[tmp_path], select=["KG900"], params=params or {}))


def test_jmespath_that_does_not_compile_names_file_and_line(tmp_path: Path) -> None:
    from kubegap_lint.core.errors import DataFileError

    with pytest.raises(DataFileError) as caught:
        load_with(tmp_path, "'containers[?'")
    message = str(caught.value)
    assert "KG900-test-policy.yaml:7" in message and "violation" in message and "does not compile" in message


def test_policy_field_of_the_wrong_type(tmp_path: Path) -> None:
    from kubegap_lint.core.errors import DataFileError

    with pytest.raises(DataFileError) as caught:
        load_with(tmp_path, "[1, 2]")
    assert "KG900-test-policy.yaml" in str(caught.value) and "violation" in str(caught.value)


# The patterns the hand-written guard refused (first three) and those it let through (the rest):
# all run on RE2 now, in time linear in the subject, and give re's answers.
CATASTROPHIC = [("(a+)+$", True), ("(x|xy)*z", False), ("(\\\\s*a?)*b", False), ("(a|aa){1,60}$", True),
                ("(?:a+){2,100}$", True), ("a*" * 20 + "b", False), ("(a|a)*c$", False),
                ("^(a?){30}a{30}$", True), ("(.*a){12}$", True)]


@pytest.mark.parametrize("pattern, matches", CATASTROPHIC)
def test_catastrophic_patterns_run_in_linear_time(pattern: str, matches: bool, tmp_path: Path) -> None:
    # A 49-character name held the lint past 60 s with (a|aa){1,60}$ on Python's re.
    job = GPU_JOB.replace("name: finetune", "name: " + "a" * 49)
    for expression, params in ((f"\"match('{pattern}', name)\"", None),
                               ("\"match(param('evil'), name)\"", {"evil": pattern.replace("\\\\", "\\")})):
        result = load_with(tmp_path, expression, params).lint_texts([("job.yaml", job)])
        assert result.errors == []
        assert [(f.rule_id, f.location.line) for f in result.findings] == ([("KG900", 2)] if matches else [])  # kind: Job


def test_computed_patterns_run_on_re2_and_unexpressible_ones_are_timed() -> None:
    import jmespath

    from kubegap_lint.catalog.functions import MAX_MATCH_SUBJECT, PolicyFunctions

    options = jmespath.Options(custom_functions=PolicyFunctions({}))
    subject = "a" * (MAX_MATCH_SUBJECT - 1) + "!"
    assert jmespath.search("match(p, s)", {"p": "(a+)+$", "s": subject}, options=options) is False
    assert jmespath.search("match(p, s)", {"p": "(a+)+!$", "s": subject}, options=options) is True
    # A lookahead RE2 cannot express runs on re under a timer: an error naming the pattern.
    with pytest.raises(jmespath.exceptions.JMESPathError) as caught:
        jmespath.search("match(p, s)", {"p": "(a|aa)*(?=c)$", "s": "a" * 40 + "b"}, options=options)
    assert "'(a|aa)*(?=c)$' took over 0.5 s" in str(caught.value)
    assert jmespath.search("match(p, s)", {"p": "(a)\\1", "s": "xaa"}, options=options) is True


def test_a_pattern_no_engine_compiles_is_refused_at_load(tmp_path: Path) -> None:
    from kubegap_lint.core.errors import DataFileError

    with pytest.raises(DataFileError) as caught:
        load_with(tmp_path, "\"match('(unclosed', name)\"")
    assert "KG900-test-policy.yaml: violation: regular expression '(unclosed' does not compile" in str(caught.value)


def test_custom_function_with_wrong_types_is_one_error(tmp_path: Path) -> None:
    linter = load_with(tmp_path, "\"contains_any(pods, ['x'])\"")  # subject: a string or null
    result = linter.lint_texts([("job.yaml", GPU_JOB)])
    assert len(result.errors) == 1
    error = result.errors[0]
    assert error.path == "job.yaml" and "KG900" in error.message and "KG900-test-policy.yaml" in error.message
    assert result.exit_code(linter.settings.fail_on) == 2


def test_cli_turns_a_bad_policy_into_exit_2_without_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "KG900-test-policy.yaml").write_text(POLICY.replace("VIOLATION", "\"match('(unclosed', name)\""))
    code = ("import sys, pathlib, kubegap_lint.catalog.policies as catalog; load = catalog.load_catalog;"
            f" catalog.load_catalog = lambda dirs=(), **kw: load([pathlib.Path({str(tmp_path)!r})], **kw);"
            " sys.argv = ['kubegap-lint', '-']; from kubegap_lint.cli.main import main; main()")
    proc = subprocess.run([sys.executable, "-c", code], input=GPU_JOB.encode(), capture_output=True,
                          cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err
    assert err.startswith("kubegap-lint: ") and "KG900-test-policy.yaml: violation:" in err


def test_an_expression_that_grows_exponentially_is_stopped_naming_the_policy(tmp_path: Path) -> None:
    # Forty doubling stages: 2^40 values unbounded (2.5 GB measured before the bound).
    linter = load_with(tmp_path, "\"length(pods" + " | [@, @][]" * 40 + ") > `0`\"")
    result = linter.lint_texts([("job.yaml", GPU_JOB), ("other.yaml", GPU_JOB.replace("finetune", "other"))])
    assert list(result.iter_findings()) == []
    assert [e.display().split(" could not")[0] for e in result.errors] == [
        f"job.yaml:2:1: policy KG900 ({tmp_path / 'KG900-test-policy.yaml'})",
        f"other.yaml:2:1: policy KG900 ({tmp_path / 'KG900-test-policy.yaml'})"]
    assert all(e.message.endswith(": the expression built over 1,000,000 values: stopped") for e in result.errors)
    # A few stages stay well inside the bound and give the answer.
    linter = load_with(tmp_path, "\"length(pods" + " | [@, @][]" * 4 + ") == `16`\"")
    assert [f.rule_id for f in linter.lint_texts([("job.yaml", GPU_JOB)]).iter_findings()] == ["KG900"]


def test_a_file_that_became_a_device_or_fifo_after_discovery_is_an_input_error(tmp_path: Path) -> None:
    """Discovery saw regular files; the reader checks again on the open descriptor (issue 35:
    `x.yaml -> /dev/zero` ended partial runs with MemoryError)."""
    from kubegap_lint.core.model import InputError
    from kubegap_lint.engine.parallel import _open_source
    from kubegap_lint.input.read import ReadStats
    from kubegap_lint.input.readers import SourceReader
    from kubegap_lint.input.sources import Source

    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    os.mkfifo(tmp_path / "fifo.yaml")
    os.symlink("/proc/self/environ", tmp_path / "env.yaml")
    sources = [Source(name, str(tmp_path / name)) for name in ("zero.yaml", "fifo.yaml", "env.yaml")]
    errors: list[InputError] = []
    assert list(SourceReader(sources).read(ReadStats(), errors)) == []
    assert [e.display() for e in errors] == [
        "zero.yaml: cannot be read: not a regular file (FIFO, device or socket)",
        "fifo.yaml: cannot be read: not a regular file (FIFO, device or socket)",
        "env.yaml: cannot be read: a file of /proc or /sys, not of the repository"]
    for source in sources:  # the --jobs path opens its sources alike
        with pytest.raises(OSError):
            _open_source(source)


def test_stdin_closed_is_an_input_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    proc = subprocess.run(["bash", "-c", 'exec "$0" -m kubegap_lint - a.yaml <&-', sys.executable],
                          capture_output=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == ["kubegap-lint: <stdin>: cannot be read: standard input is closed"]


@pytest.mark.parametrize("violation", ["(" * 3000 + "a" + ")" * 3000, "!" * 20000 + "a",
                                       "!(" * 1500 + "a" + ")" * 1500, "[" * 3000 + "a" + "]" * 3000])
def test_an_expression_nested_too_deep_is_a_policy_error_not_a_recursion_error(tmp_path: Path, violation: str) -> None:
    from kubegap_lint.core.errors import DataFileError

    with pytest.raises(DataFileError) as caught:
        load_with(tmp_path, f"'{violation}'")
    assert str(caught.value) == (f"{tmp_path / 'KG900-test-policy.yaml'}:7:1: violation: JMESPath does not compile:"
                                 " nested more than 100 levels deep (brackets, ! and &)")


def test_an_expression_at_the_depth_limit_loads_and_runs(tmp_path: Path) -> None:
    from kubegap_lint.engine.run import Linter

    linter = load_with(tmp_path, "'" + "!" * 50 + "(" * 50 + "kind == `\"Pod\"`" + ")" * 50 + "'")
    assert isinstance(linter, Linter) and [p.id for p in linter.catalog.policies if p.id == "KG900"] == ["KG900"]
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n"
    result = linter.lint_texts([("pod.yaml", pod)])
    assert result.errors == []  # evaluated at that depth without a RecursionError


def test_a_too_deep_expression_through_the_cli_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "KG900-test-policy.yaml").write_text(POLICY.replace("VIOLATION", "'" + "!" * 20000 + "a'"))
    (tmp_path / ".kubegap-lint.yaml").write_text("policy_dirs: [policies]\n")
    (tmp_path / "x.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    proc = run_cli("x.yaml", cwd=tmp_path, env={"KUBEGAP_LINT_NO_CACHE": "1"})
    assert proc.returncode == 2
    assert b"internal error" not in proc.stderr and b"RecursionError" not in proc.stderr
    assert b"nested more than 100 levels deep" in proc.stderr

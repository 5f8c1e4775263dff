"""`lint --fix`, `--diff`, `--unsafe-fixes`, `--show-fixes` (issue 32, docs/autofix.md).

Each case in tests/fixtures/autofix is an input and the exact file `--fix --unsafe-fixes`
must make of it (reviewed by hand when the case was added)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, requires_shared, run_cli
from fix_corpus import comments_kept

from kubegap_lint.fix.apply import apply_edits
from kubegap_lint.fix.compute import BUILDERS
from kubegap_lint.fix.model import Edit, LineMap

FIXTURES = Path(__file__).parent / "fixtures" / "autofix"
CASES = sorted(p.name.removesuffix(".input.yaml") for p in FIXTURES.glob("*.input.yaml"))
SAFE_RULES = {"KG301", "KG306", "KG307", "KG406", "KG407", "KG503"}  # KG302's heartbeat value is the user's choice
# KG405 is safe as a new podFailurePolicy, unsafe when it joins rules the user wrote (their order counts).
SAFE_CASES = {"KG405-job-jobset"}


def _copy(tmp_path: Path, case: str) -> Path:
    target = tmp_path / f"{case}.yaml"
    shutil.copyfile(FIXTURES / f"{case}.input.yaml", target)
    return target


def _fix(path: Path, *extra: str) -> tuple[int, bytes, bytes]:
    rule = path.name.split("-")[0]
    run = run_cli("lint", "--no-config", "--select", rule, "--fix", *extra, str(path))
    return run.returncode, run.stdout, run.stderr


@pytest.mark.parametrize("case", CASES)
def test_unsafe_fixes_make_the_expected_file_and_a_second_run_changes_nothing(tmp_path: Path, case: str) -> None:
    path = _copy(tmp_path, case)
    code, out, err = _fix(path, "--unsafe-fixes")
    expected = (FIXTURES / f"{case}.fixed.yaml").read_bytes()
    assert path.read_bytes() == expected, err.decode()
    assert code == 0, out.decode()  # the rule's findings are all fixed: nothing left
    assert b"fixed" in err
    before = (FIXTURES / f"{case}.input.yaml").read_bytes().decode()
    assert comments_kept(before, expected.decode()) == []
    _fix(path, "--unsafe-fixes")
    assert path.read_bytes() == expected


@pytest.mark.parametrize("case", CASES)
def test_safe_fixes_alone_apply_only_the_safe_rules(tmp_path: Path, case: str) -> None:
    path = _copy(tmp_path, case)
    code, _, err = _fix(path)
    rule = case.split("-")[0]
    if rule in SAFE_RULES or case in SAFE_CASES:
        assert path.read_bytes() == (FIXTURES / f"{case}.fixed.yaml").read_bytes()
        assert code == 0
    else:
        assert path.read_bytes() == (FIXTURES / f"{case}.input.yaml").read_bytes()
        unfixed = run_cli("lint", "--no-config", "--select", rule, str(FIXTURES / f"{case}.input.yaml"))
        assert code == unfixed.returncode and b"more with --unsafe-fixes" in err


def test_crlf_line_ends_are_kept() -> None:
    fixed = (FIXTURES / "KG307-pytorchjob-crlf.fixed.yaml").read_bytes()
    assert fixed.count(b"\r\n") == fixed.count(b"\n") == 19


@pytest.mark.parametrize("rule", sorted(BUILDERS))
def test_the_good_examples_are_not_touched(tmp_path: Path, rule: str) -> None:
    """Must-not: a rule's good examples have no finding of it, so its fix changes nothing."""
    folder = next((REPO / "examples").glob(f"{rule}-*"))
    for good in sorted(folder.glob("good-*.yaml")):
        copy = tmp_path / good.name
        shutil.copyfile(good, copy)
        run_cli("lint", "--no-config", "--select", rule, "--fix", "--unsafe-fixes", str(copy))
        assert copy.read_bytes() == good.read_bytes(), good.name


def test_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    path = _copy(tmp_path, "KG503-deployment")
    run = run_cli("lint", "--no-config", "--select", "KG503", "--diff", str(path))
    assert run.returncode == 1
    assert path.read_bytes() == (FIXTURES / "KG503-deployment.input.yaml").read_bytes()
    diff = run.stdout.decode()
    assert diff.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert "+          limits:\n+            nvidia.com/gpu: 1\n" in diff
    clean = run_cli("lint", "--no-config", "--select", "KG503", "--diff", str(FIXTURES / "KG503-deployment.fixed.yaml"))
    assert clean.returncode == 0 and clean.stdout == b""


def test_fix_on_stdin_writes_the_fixed_stream_to_stdout(tmp_path: Path) -> None:
    data = (FIXTURES / "KG503-raycluster.input.yaml").read_bytes()
    run = run_cli("lint", "--no-config", "--select", "KG503", "--fix", "-", stdin=data)
    assert run.stdout == (FIXTURES / "KG503-raycluster.fixed.yaml").read_bytes()
    assert run.returncode == 0, run.stderr.decode()
    left = run_cli("lint", "--no-config", "--fix", "-", stdin=data)  # every rule: KG501's fix is unsafe
    assert left.stdout == run.stdout
    assert left.returncode == 1 and b"<stdin>:26:15: warning KG501" in left.stderr
    assert b"1 more with --unsafe-fixes" in left.stderr


def test_fix_with_stdin_and_a_file_is_a_usage_error(tmp_path: Path) -> None:
    path = _copy(tmp_path, "KG503-deployment")
    run = run_cli("lint", "--fix", "-", str(path), stdin=b"")
    assert run.returncode == 2 and b"--fix - takes no other path" in run.stderr


@pytest.mark.parametrize("broken", [
    "  broken: [unclosed\n",  # a syntax error in a later document
    "metadata:\n  name: a\nmetadata:\n  name: b\n",  # a duplicate key
])
def test_a_file_with_an_input_fault_is_never_touched(tmp_path: Path, broken: str) -> None:
    text = (FIXTURES / "KG503-deployment.input.yaml").read_text() + "---\nkind: ConfigMap\n" + broken
    path = tmp_path / "faulty.yaml"
    path.write_text(text)
    run = run_cli("lint", "--no-config", "--fix", "--unsafe-fixes", str(path))
    assert path.read_text() == text
    assert run.returncode == 1


def test_the_summary_names_a_file_left_unfixed_for_its_input_fault(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n spec: {\n")
    run = run_cli("lint", "--no-config", "--fix", str(path))
    assert run.returncode == 1
    assert (f"kubegap-lint: fixed 0 finding(s) in 0 file(s); 1 file(s) not edited until their YAML error"
            f" or other input fault (KG001-KG007) is fixed: {path}") in run.stderr.decode().splitlines()


def test_only_the_named_files_are_written(tmp_path: Path) -> None:
    named = _copy(tmp_path, "KG503-deployment")
    other = tmp_path / "other"
    other.mkdir()
    shutil.copyfile(FIXTURES / "KG503-raycluster.input.yaml", other / "ray.yaml")
    run_cli("lint", "--no-config", "--fix", str(named))
    assert named.read_bytes() == (FIXTURES / "KG503-deployment.fixed.yaml").read_bytes()
    assert (other / "ray.yaml").read_bytes() == (FIXTURES / "KG503-raycluster.input.yaml").read_bytes()


def test_the_mode_of_a_fixed_file_is_kept(tmp_path: Path) -> None:
    path = _copy(tmp_path, "KG503-deployment")
    path.chmod(0o640)
    run_cli("lint", "--no-config", "--fix", str(path))
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def _report(path: Path, fmt: str) -> dict:
    run = run_cli("lint", "--no-config", "--select", "KG503", "--show-fixes", "--format", fmt, str(path))
    return json.loads(run.stdout)


def test_json_fix_edits_applied_give_the_fixed_file(tmp_path: Path) -> None:
    path = _copy(tmp_path, "KG503-deployment")
    report = _report(path, "json")
    text = path.read_text()
    lines = LineMap(text)
    offsets = {(line, column): index for index in range(len(text) + 1)
               for line, column in [lines.position(index)]}
    edits = []
    for finding in report["findings"]:
        fix = finding["fix"]
        assert fix["applicability"] == "safe" and fix["evidence"] == ["k8s-gpu-limits-rule"]
        edits += [Edit(offsets[(e["start"]["line"], e["start"]["column"])],
                       offsets[(e["end"]["line"], e["end"]["column"])], e["text"]) for e in fix["edits"]]
    assert apply_edits(text, edits) == (FIXTURES / "KG503-deployment.fixed.yaml").read_text()


def test_json_without_show_fixes_has_no_fix_field(tmp_path: Path) -> None:
    path = _copy(tmp_path, "KG503-deployment")
    run = run_cli("lint", "--no-config", "--format", "json", str(path))
    assert all("fix" not in f for f in json.loads(run.stdout)["findings"])


@requires_shared
def test_sarif_fixes_validate_against_the_oasis_schema(tmp_path: Path) -> None:
    from sarif_checks import github_problems, schema_problems

    for case in CASES:
        _copy(tmp_path, case)
    run = run_cli("lint", "--no-config", "--show-fixes", "--unsafe-fixes", "--format", "sarif", "--sarif-root",
                  str(tmp_path), str(tmp_path))
    log = json.loads(run.stdout)
    fixes = [fix for result in log["runs"][0]["results"] for fix in result.get("fixes", [])]
    assert len(fixes) >= len(CASES)
    change = fixes[0]["artifactChanges"][0]
    assert change["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert {"deletedRegion", "insertedContent"} <= set(change["replacements"][0])
    assert schema_problems(log) == [] and github_problems(log) == []


@requires_shared
@pytest.mark.slow
def test_every_fix_on_the_whole_corpus_is_sound() -> None:
    """Issue 32's corpus check (tests/fix_corpus.py; counts in docs/corpus-report.md)."""
    from conftest import CORPUS
    from fix_corpus import run

    outcome = run(CORPUS)
    assert outcome["problems"] == {}
    assert outcome["files"] > 700 and outcome["changed"] > 0 and outcome["validated"] > 0
    assert {"KG301", "KG501", "KG503"} <= set(outcome["applied"])


def test_the_servers_plug_point_gives_each_findings_fix_from_the_json(tmp_path: Path) -> None:
    from kubegap_lint.serve import fixes

    path = _copy(tmp_path, "KG503-deployment")
    report = json.loads(run_cli("lint", "--no-config", "--show-fixes", "--format", "json", str(path)).stdout)
    text = path.read_text()
    everything = fixes.suggest(str(path), text, report["findings"])
    assert [(s["rule"], s["applicability"]) for s in everything] == [("KG501", "unsafe"), ("KG503", "safe"),
                                                                     ("KG503", "safe")]
    assert [s["edits"] for s in everything] == [f["fix"]["edits"] for f in report["findings"]]
    suggested = everything[1:]
    assert all(s["diff"].startswith(f"--- {path}") for s in suggested)
    assert suggested[0]["fingerprint"] == report["findings"][1]["fingerprint"]
    assert "+          limits:\n+            nvidia.com/gpu: 1\n" in suggested[0]["diff"]
    assert fixes.available()  # the servers register suggest_fixes and the code actions


def test_show_fixes_on_stdin_gives_the_fixes(tmp_path: Path) -> None:
    path = _copy(tmp_path, "KG503-deployment")
    piped = json.loads(run_cli("lint", "--no-config", "--show-fixes", "--format", "json", "--stdin-filename",
                               "x.yaml", "-", stdin=path.read_bytes()).stdout)
    named = json.loads(run_cli("lint", "--no-config", "--show-fixes", "--format", "json", str(path)).stdout)
    assert [f["fix"] for f in piped["findings"]] == [f["fix"] for f in named["findings"]]
    assert all(f["fix"] for f in piped["findings"])


def test_json_with_fixes_matches_the_output_schema(tmp_path: Path) -> None:
    import jsonschema

    for case in CASES:
        _copy(tmp_path, case)
    schema = json.loads((REPO / "schemas" / "output.schema.json").read_text())
    report = json.loads(run_cli("lint", "--no-config", "--show-fixes", "--format", "json", str(tmp_path)).stdout)
    jsonschema.validate(report, schema)
    assert {f["fix"]["applicability"] for f in report["findings"] if f["fix"]} == {"safe", "unsafe", "none"}


def test_explain_says_what_the_fix_does() -> None:
    from kubegap_lint.fix.summary import AUTOFIX

    assert set(AUTOFIX) == set(BUILDERS)
    assert "Autofix (safe, `--fix`): sets each accelerator's limit equal to its request." in \
        run_cli("explain", "KG503").stdout.decode()
    assert "Autofix: none, by design: choose the storage" in run_cli("explain", "KG201").stdout.decode()


def test_fixes_that_share_an_edit_write_it_once_and_overlapping_ones_wait() -> None:
    from kubegap_lint.fix.apply import apply_fixes
    from kubegap_lint.fix.model import Fix

    text = "a: 1\nb: 2\n"
    grace = Edit(10, 10, "c: 60\n")
    first = Fix("KG104", "unsafe", "one", (Edit(3, 4, "5"), grace))
    second = Fix("KG104", "unsafe", "two", (grace,))
    overlapping = Fix("KG503", "safe", "three", (Edit(3, 4, "7"),))
    fixed, applied = apply_fixes(text, [first, second, overlapping])
    assert fixed == "a: 5\nb: 2\nc: 60\n"
    assert applied == [first, second]


def test_no_flight_recorder_edit_without_a_persistent_volume(tmp_path: Path) -> None:
    """Must-not: the dumps would land on the container's writable layer (a new KG304)."""
    source = REPO / "examples" / "KG303-nccl-flight-recorder-off" / "bad-torchrun-job.yaml"
    copy = tmp_path / "job.yaml"
    shutil.copyfile(source, copy)
    run = run_cli("lint", "--no-config", "--select", "KG303", "--show-fixes", "--unsafe-fixes", "--format", "json",
                  str(copy))
    (finding,) = json.loads(run.stdout)["findings"]
    assert finding["fix"]["edits"] == [] and finding["fix"]["description"].startswith("no edit: mount a persistent")
    run_cli("lint", "--no-config", "--select", "KG303", "--fix", "--unsafe-fixes", str(copy))
    assert copy.read_bytes() == source.read_bytes()


@requires_shared
@pytest.mark.slow
def test_fix_on_a_copy_of_the_corpus_with_the_command_line(tmp_path: Path) -> None:
    """The command line on a copy of the whole corpus (cross-file facts included): the fixed
    files keep every line and comment, no finding is new, and a second run has nothing to do."""
    from collections import Counter

    from conftest import CORPUS
    from fix_corpus import comments_kept

    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)

    def identities() -> Counter:
        report = json.loads(run_cli("lint", "--no-config", "--format", "json", str(copy)).stdout)
        return Counter((f["rule"], Path(f["location"]["path"]).relative_to(copy).as_posix(), f["document"],
                        f["container"], json.dumps(f["resource"])) for f in report["findings"])

    before = identities()
    run = run_cli("lint", "--no-config", "--fix", "--unsafe-fixes", "-q", str(copy))
    assert run.returncode == 1 and b"fixed " in run.stderr
    changed = [p for p in sorted(copy.rglob("*")) if p.is_file()
               and p.read_bytes() != (CORPUS / p.relative_to(copy)).read_bytes()]
    assert len(changed) > 100
    for path in changed:
        assert comments_kept((CORPUS / path.relative_to(copy)).read_bytes().decode(), path.read_bytes().decode()) == []
    after = identities()
    assert not after - before  # no finding is new
    assert sum(after.values()) < sum(before.values())
    again = run_cli("lint", "--no-config", "--diff", "--unsafe-fixes", str(copy))
    assert again.returncode == 0 and again.stdout == b""


@requires_shared
@pytest.mark.slow
def test_the_multitool_accepts_sarif_fixes(tmp_path: Path) -> None:
    from sarif_checks import install_multitool, multitool_binary, multitool_problems

    binary = multitool_binary() or install_multitool()
    if binary is None:
        pytest.skip("npm not found: cannot install @microsoft/sarif-multitool (scripts/test.sh installs it)")
    for case in CASES:
        _copy(tmp_path, case)
    log = tmp_path / "fixes.sarif"
    log.write_bytes(run_cli("lint", "--no-config", "--show-fixes", "--unsafe-fixes", "--format", "sarif",
                            "--sarif-root", str(tmp_path), str(tmp_path)).stdout)
    assert b'"fixes"' in log.read_bytes()
    out = tmp_path / "out"
    out.mkdir()
    assert multitool_problems(binary, log, out) == []


def test_every_example_fixed_parses_keeps_its_lines_and_a_second_run_has_nothing_to_do(tmp_path: Path) -> None:
    """The examples hold every odd input the linter knows (syntax errors, duplicate keys,
    aliases, unrendered templates, suppressions): --fix never fails on them, never touches a
    file with an input fault, and converges in one run."""
    from ruamel.yaml import YAML

    copy = tmp_path / "examples"
    shutil.copytree(REPO / "examples", copy)
    run = run_cli("lint", "--no-config", "--fix", "--unsafe-fixes", "-q", str(copy))
    assert run.returncode == 1 and b"internal error" not in run.stderr
    changed = 0
    for path in sorted(copy.rglob("*.y*ml")):
        original = (REPO / "examples" / path.relative_to(copy)).read_bytes()
        if path.read_bytes() == original:
            continue
        changed += 1
        assert not path.relative_to(copy).as_posix().startswith(("KG001", "KG002", "KG003", "KG004", "KG007"))
        assert comments_kept(original.decode(), path.read_text()) == [], path
        list(YAML(typ="safe", pure=True).load_all(path.read_text()))
    assert changed > 50
    again = run_cli("lint", "--no-config", "--diff", "--unsafe-fixes", str(copy))
    assert again.returncode == 0 and again.stdout == b""


def test_the_writer_keeps_flow_collections_flow_and_block_ones_in_their_layout() -> None:
    from kubegap_lint.fix.document import Layout, YamlFile, node_at
    from kubegap_lint.fix.writer import add_entries, append_item, set_scalar

    text = "a: {}\nb: []\nc:\n- x: 1\n  y: 'q'\nd: {e: 1}\n"
    yfile = YamlFile(text)
    root = yfile.documents[0]
    layout = Layout(root)
    assert (layout.step, layout.dash_offset) == (2, 0)
    edits = [add_entries(yfile, layout, node_at(root, ("a",)), {"k": "1Gi"}),
             append_item(yfile, layout, node_at(root, ("b",)), {"name": "n"}),  # YAML 1.1 reads n as false
             append_item(yfile, layout, node_at(root, ("c",)), {"x": 2, "y": "true"}),
             set_scalar(yfile, node_at(root, ("c", 0, "y")), "it's"),
             add_entries(yfile, layout, node_at(root, ("d",)), {"f": [1, 2]})]
    assert apply_edits(text, edits) == ("a: {k: 1Gi}\nb: [{name: \"n\"}]\nc:\n- x: 1\n  y: 'it''s'\n- x: 2\n"
                                        "  \"y\": \"true\"\nd: {e: 1, f: [1, 2]}\n")


def test_a_document_that_starts_on_the_marker_line_is_found_by_its_line() -> None:
    from kubegap_lint.fix.document import YamlFile

    yfile = YamlFile("a: {b: 1}\n--- {c: 2}\n")
    assert yfile.document_at(2) is yfile.documents[1]


def _fixes_of(path: Path, rules: str) -> list[dict]:
    run = run_cli("lint", "--no-config", "--select", rules, "--show-fixes", "--format", "json", str(path))
    return [finding["fix"] for finding in json.loads(run.stdout)["findings"]]


def test_no_startup_probe_without_a_handler_to_copy(tmp_path: Path) -> None:
    """Must-not (KG205): a liveness probe with no handler gives nothing to check the start with."""
    path = tmp_path / "vllm.yaml"
    text = (FIXTURES / "KG205-deployment.input.yaml").read_text().split("---")[0]
    path.write_text(text.replace("          httpGet:\n            path: /health\n            port: http   # the named port\n",
                                 ""))
    (fix,) = _fixes_of(path, "KG205")
    assert fix["edits"] == [] and fix["description"].startswith("no edit: the liveness probe has no handler")
    run_cli("lint", "--no-config", "--select", "KG205", "--fix", "--unsafe-fixes", str(path))
    assert path.read_text() == text.replace("          httpGet:\n            path: /health\n"
                                            "            port: http   # the named port\n", "")


def test_no_rolling_update_beside_a_written_rolling_update_block(tmp_path: Path) -> None:
    """Must-not (KG107): Recreate beside a rollingUpdate (which the API refuses) is left to the user."""
    path = tmp_path / "tgi.yaml"
    text = (FIXTURES / "KG107-deployment-lws.input.yaml").read_text().split("---")[0]
    text = text.replace("{type: Recreate}", "{type: Recreate, rollingUpdate: {maxSurge: 1}}")
    path.write_text(text)
    (fix,) = _fixes_of(path, "KG107")
    assert fix["edits"] == [] and "rollingUpdate is written beside Recreate" in fix["description"]


def test_the_disruption_and_replacement_fixes_share_the_replacement_edit(tmp_path: Path) -> None:
    """KG405 on a Job with early replacement written out turns it to Failed, the edit KG407 makes:
    written once, and the Job validates (a podFailurePolicy allows only Failed)."""
    import kubernetes_validate
    from ruamel.yaml import YAML

    path = tmp_path / "sft.yaml"
    text = (FIXTURES / "KG405-cronjob-rules.input.yaml").read_text().split("---\n", 1)[1]
    path.write_text(text.replace("  parallelism: 2\n", "  completionMode: Indexed\n  parallelism: 2\n", 1))
    assert sorted(f["applicability"] for f in _fixes_of(path, "KG405,KG407")) == ["safe", "unsafe"]
    run = run_cli("lint", "--no-config", "--select", "KG405,KG407", "--fix", "--unsafe-fixes", str(path))
    fixed = path.read_text()
    assert run.returncode == 0 and fixed.count("podReplacementPolicy: Failed") == 1
    assert "podReplacementPolicy: TerminatingOrFailed" not in fixed
    kubernetes_validate.validate(YAML(typ="safe", pure=True).load(fixed), "1.33.0", strict=True)


def test_the_new_rules_fixes_name_their_evidence_and_the_user_decides_placement(tmp_path: Path) -> None:
    for case, evidence in [("KG406-lws", "lws-restart-policy"), ("KG407-job-cronjob", "k8s-pod-replacement-policy"),
                           ("KG405-job-jobset", "k8s-job-pod-failure-policy"),
                           ("KG205-deployment", "kserve-liveness-kills-model-load"),
                           ("KG107-deployment-lws", "k8s-rollout-strategies")]:
        fixes = _fixes_of(_copy(tmp_path, case), case.split("-")[0])
        assert fixes and all(fix["evidence"] == [evidence] and fix["edits"] for fix in fixes), case
    for rule, words in [("KG106", "highly available Redis"), ("KG108", "topology level")]:
        bad = next(next((REPO / "examples").glob(f"{rule}-*")).glob("bad-*.yaml"))
        fixes = _fixes_of(bad, rule)
        assert fixes and all(f["applicability"] == "none" and words in f["description"] for f in fixes), rule


@pytest.mark.parametrize("case", CASES)
def test_the_expected_files_core_documents_validate(case: str) -> None:
    """The fixed fixtures' v1, apps/v1 and batch/v1 documents pass the Kubernetes 1.33 OpenAPI
    schema (a pod failure rule without its `status`, for one, does not)."""
    from fix_corpus import validate_core

    _, errors = validate_core((FIXTURES / f"{case}.fixed.yaml").read_text())
    assert errors == []

"""The release shape: LICENSE, CHANGELOG, help links that resolve, the release workflow, and an
sdist and wheel that build offline, pass `twine check` and run in a fresh venv."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import REPO
from ruamel.yaml import YAML

import kubegap_lint
from kubegap_lint.report.sarif import DEFAULT_BRANCH, DOCS_URL_ENV, REPOSITORY_URL, rules_doc_url

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of the package below 3.11
    import tomli as tomllib

VERSION = kubegap_lint.__version__
# sha256 of the Apache License 2.0 as the ASF publishes it (LICENSE-2.0.txt, 202 lines).
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=60)


def _load_stamp() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stamp_release", REPO / "scripts" / "stamp_release.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_license_is_the_apache_2_text_verbatim() -> None:
    text = (REPO / "LICENSE").read_bytes()
    assert hashlib.sha256(text).hexdigest() == APACHE_2_SHA256
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert (pyproject["project"]["license"], pyproject["project"]["license-files"]) == ("Apache-2.0", ["LICENSE"])


def test_changelog_dates_this_version_and_links_every_section() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \[([^\]]+)\](.*)$", text, re.MULTILINE)
    assert sections[0] == ("Unreleased", "")
    assert sections[1][0] == VERSION and re.fullmatch(r" - \d{4}-\d{2}-\d{2}", sections[1][1]), sections[1]
    links = dict(re.findall(r"^\[([^\]]+)\]: (\S+)$", text, re.MULTILINE))
    assert sorted(links) == sorted(name for name, _ in sections)
    assert all(url.startswith(REPOSITORY_URL + "/") for url in links.values())


def _sarif_of_examples(tmp_path: Path) -> str:
    from click.testing import CliRunner

    from kubegap_lint.cli.main import cli

    out = tmp_path / "examples.sarif"
    proc = CliRunner().invoke(cli, ["lint", "--format", "sarif", "--output", str(out), str(REPO / "examples")])
    assert proc.exit_code == 1, proc.output
    return out.read_text(encoding="utf-8")


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -."""
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in markdown.splitlines() if re.match(r"#{1,6} ", line)}


def test_every_help_link_names_a_ref_and_file_that_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every link into the repository that a SARIF log of this build holds resolves: its ref is a
    tag or the default branch of this checkout, the file is there at that ref, and so is the anchor."""
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: the refs the help links name cannot be looked up")
    monkeypatch.delenv(DOCS_URL_ENV, raising=False)
    links = set(re.findall(re.escape(REPOSITORY_URL) + r"/blob/([^\s\"\)#]+)#([\w-]+)", _sarif_of_examples(tmp_path)))
    assert len(links) > 31  # every rule's section, and the incidents'
    for ref, path in {tuple(target.split("/", 1)) for target, _ in links}:
        if ref.startswith("v"):
            assert _git("rev-parse", "--verify", "--quiet", f"refs/tags/{ref}").returncode == 0, f"no tag {ref}"
            docs = _git("show", f"{ref}:{path}").stdout
        else:
            assert ref == DEFAULT_BRANCH
            assert any(_git("rev-parse", "--verify", "--quiet", f"{prefix}{ref}").returncode == 0
                       for prefix in ("refs/heads/", "refs/remotes/origin/")), f"no branch {ref}"
            # The branch this checkout merges into; its anchors are the ones this change puts there.
            docs = (REPO / path).read_text(encoding="utf-8")
        assert _git("cat-file", "-e", f"{ref}:{path}").returncode == 0, f"{path} is not in {ref}"
        missing = {anchor for target, anchor in links if target == f"{ref}/{path}"} - _anchors(docs)
        assert not missing, f"{ref}:{path} has no heading for {sorted(missing)}"


def test_a_build_links_to_its_tag_only_when_released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DOCS_URL_ENV, raising=False)
    assert kubegap_lint.RELEASED is False  # as committed: only the release workflow stamps it
    assert rules_doc_url() == f"{REPOSITORY_URL}/blob/main/docs/rules.md"
    monkeypatch.setattr(kubegap_lint, "RELEASED", True)
    assert rules_doc_url() == f"{REPOSITORY_URL}/blob/v{VERSION}/docs/rules.md"
    monkeypatch.setenv(DOCS_URL_ENV, "https://docs.example/rules.md")
    assert rules_doc_url() == "https://docs.example/rules.md"


def _release_tree(tmp_path: Path, version: str = VERSION, changelog: str | None = None) -> Path:
    (tmp_path / "kubegap_lint").mkdir()
    init = (REPO / "kubegap_lint" / "__init__.py").read_text(encoding="utf-8")
    (tmp_path / "kubegap_lint" / "__init__.py").write_text(init.replace(f'"{VERSION}"', f'"{version}"'))
    if changelog is None:
        changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    (tmp_path / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
    return tmp_path


def test_stamp_release_marks_a_matching_tag_released(tmp_path: Path) -> None:
    stamp = _load_stamp()
    root = _release_tree(tmp_path)
    assert stamp.main([f"v{VERSION}", "--root", str(root)]) == 0
    stamped: dict[str, Any] = {}
    exec((root / "kubegap_lint" / "__init__.py").read_text(encoding="utf-8"), stamped)
    assert (stamped["__version__"], stamped["RELEASED"]) == (VERSION, True)


@pytest.mark.parametrize(("tag", "version", "changelog", "error"), [
    ("v9.9.9", VERSION, None,
     f"tag 'v9.9.9' does not name the package version '{VERSION}' (expected 'v{VERSION}')"),
    ("0.2.0", "0.2.0", None, "tag '0.2.0' does not name the package version '0.2.0' (expected 'v0.2.0')"),
    ("v0.3.0.dev0", "0.3.0.dev0", None, "version '0.3.0.dev0' is not a final release X.Y.Z"),
    ("v0.2.0", "0.2.0", "## [0.2.0]\n", "CHANGELOG.md: no dated section '## [0.2.0] - YYYY-MM-DD'"),
])
def test_stamp_release_refuses_a_tag_the_tree_does_not_match(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], tag: str, version: str, changelog: str | None,
        error: str) -> None:
    stamp = _load_stamp()
    root = _release_tree(tmp_path, version, changelog)
    before = (root / "kubegap_lint" / "__init__.py").read_text(encoding="utf-8")
    assert stamp.main([tag, "--root", str(root)]) == 1
    message = capsys.readouterr().err
    assert message.startswith("stamp_release: ") and message.rstrip("\n").endswith(error) and message.count("\n") == 1
    assert (root / "kubegap_lint" / "__init__.py").read_text(encoding="utf-8") == before


def _workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = YAML(typ="safe").load((REPO / ".github" / "workflows" / "release.yml").read_text())
    return loaded


def test_release_workflow_builds_checks_and_publishes_on_a_tag() -> None:
    workflow = _workflow()
    assert workflow["on"] == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {"contents": "read"}
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    runs = "\n".join(step.get("run", "") for step in build["steps"])
    assert 'python scripts/stamp_release.py "$GITHUB_REF_NAME"' in runs
    assert "python -m build\n" in runs and "python -m twine check --strict dist/*" in runs
    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1] == {"uses": "pypa/gh-action-pypi-publish@release/v1"}
    for job in (build, publish):
        for step in job["steps"]:
            if "uses" in step:  # a major version, the way the actions publish them
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+|release/v\d+)", step["uses"]), step["uses"]


def test_release_workflow_installs_the_dev_extras_pins() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    pins = {name: pin for name, _, pin in (r.partition("==") for r in pyproject["project"]["optional-dependencies"]["dev"])}
    runs = "\n".join(step.get("run", "") for step in _workflow()["jobs"]["build"]["steps"])
    assert f"pip install build=={pins['build']} twine=={pins['twine']}\n" in runs


def _run(*args: str | Path, cwd: Path | None = None, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", DOCS_URL_ENV, "NO_COLOR")}
    env["KUBEGAP_LINT_NO_CACHE"] = "1"  # each tool reads its own built-in policies, not a shared cache
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


@pytest.mark.slow
def test_sdist_and_wheel_build_offline_pass_twine_and_run_in_a_fresh_venv(tmp_path: Path) -> None:
    """`python -m build --no-isolation` uses this venv's hatchling: no network. The fresh venv
    then installs the wheel and its dependencies from the package index, as a user's would (the
    one step here that needs the network)."""
    dist = tmp_path / "dist"
    proc = _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sdist, wheel = dist / f"kubegap_lint-{VERSION}.tar.gz", dist / f"kubegap_lint-{VERSION}-py3-none-any.whl"
    assert sorted(dist.iterdir()) == [wheel, sdist]
    proc = _run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)
    assert proc.returncode == 0 and proc.stdout.count("PASSED") == 2, proc.stdout + proc.stderr

    names = set(zipfile.ZipFile(wheel).namelist())
    info = f"kubegap_lint-{VERSION}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    assert zipfile.ZipFile(wheel).read(f"{info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
    for folder, pattern in (("policies", "*.yaml"), ("schemas", "*.json")):
        shipped = {p.name for p in (REPO / folder).glob(pattern)}
        assert shipped and {f"kubegap_lint/_data/{folder}/{name}" for name in shipped} <= names, folder

    venv = tmp_path / "fresh"
    assert _run(sys.executable, "-m", "venv", venv).returncode == 0
    # With the helm extra: examples/ holds a chart, which this checkout's venv renders in-process.
    proc = _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"{wheel}[helm]", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The wheel's code, not this checkout's (`-c` puts the working folder first on sys.path; a
    # console script puts its own folder there, so the run in REPO below imports the wheel too).
    proc = _run(venv / "bin" / "python", "-c", "import kubegap_lint; print(kubegap_lint.__file__)", cwd=tmp_path)
    assert Path(proc.stdout.strip()).is_relative_to(venv), proc.stdout
    assert _run(venv / "bin" / "kubegap-lint", "--version").stdout == f"kubegap-lint, version {VERSION}\n"
    # The installed tool lints the examples exactly as this checkout does, built-in data included.
    installed = _run(venv / "bin" / "kubegap-lint", "--format", "json", "examples/", cwd=REPO)
    here = _run(sys.executable, "-m", "kubegap_lint", "--format", "json", "examples/", cwd=REPO)
    assert installed.returncode == here.returncode == 1, installed.stderr
    assert json.loads(installed.stdout)["summary"] == json.loads(here.stdout)["summary"]
    assert installed.stdout == here.stdout and installed.stderr == here.stderr

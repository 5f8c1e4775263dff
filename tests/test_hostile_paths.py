"""Symlinks out of the linted tree, configuration from outside the repository, wrong config types."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from conftest import REPO, run_cli

from kubegap_lint.config.discover import discover_config

SPREAD = REPO / "examples" / "KG101-gpu-replicas-share-power-domain" / "bad-no-spread.yaml"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    shutil.copy(SPREAD, repo / "in.yaml")
    secret = tmp_path / "secret.yaml"
    secret.write_text(SPREAD.read_text(encoding="utf-8").replace("llm-server", "outside-secret"),
                      encoding="utf-8")
    (repo / "link.yaml").symlink_to(secret)
    return repo


def test_a_symlink_out_of_the_tree_is_skipped_with_a_note_in_every_format(tmp_path) -> None:
    repo = _repo(tmp_path)
    for fmt in ("text", "github", "sarif", "json"):
        result = run_cli(".", "--select", "KG101", "--format", fmt, "--sarif-root", ".", cwd=repo)
        assert result.returncode == 1, (fmt, result.stderr)
        assert b"outside-secret" not in result.stdout
        assert result.stderr == (b"kubegap-lint: note: link.yaml: skipped: a symbolic link to a file"
                                 b" outside . (--follow-symlinks-out reads it)\n")
    named = run_cli("link.yaml", "in.yaml", "--select", "KG101", "--format", "sarif", cwd=repo)
    assert named.returncode == 1 and b"outside-secret" not in named.stdout
    followed = run_cli(".", "--select", "KG101", "--follow-symlinks-out", cwd=repo)
    assert b"Deployment outside-secret" in followed.stdout and followed.stderr == b""


def test_a_symlink_to_nothing_in_a_folder_is_noted(tmp_path) -> None:
    # Found in a folder, it is said, not passed over; named, it is an input error as any
    # missing path is. One pointing out of the tree is "to nothing", not "to a file outside".
    repo = _repo(tmp_path)
    (repo / "link.yaml").unlink()
    (repo / "gone.yaml").symlink_to("removed.yaml")
    (repo / "away.yml").symlink_to(tmp_path / "removed.yaml")
    result = run_cli(".", "--select", "KG101", "--format", "json", cwd=repo)
    assert result.returncode == 1
    assert [f["location"]["path"] for f in json.loads(result.stdout)["findings"]] == ["in.yaml"]
    assert result.stderr.decode().splitlines() == [
        f"kubegap-lint: note: {name}: skipped: a symbolic link to nothing (its target is not there)"
        for name in ("away.yml", "gone.yaml")]
    (repo / ".kubegap-lint.yaml").write_text("exclude: [gone.yaml, away.yml]\n", encoding="utf-8")
    excluded = run_cli(".", "--select", "KG101", cwd=repo)
    assert excluded.returncode == 1 and excluded.stderr == b""
    (repo / ".kubegap-lint.yaml").unlink()
    named = run_cli("gone.yaml", cwd=repo)
    assert named.returncode == 2
    assert named.stderr.decode().splitlines()[0] == "kubegap-lint: gone.yaml: no such file or folder"


def test_a_symlink_inside_the_tree_is_read(tmp_path) -> None:
    repo = _repo(tmp_path)
    (repo / "link.yaml").unlink()
    (repo / "inner.yaml").symlink_to("in.yaml")
    result = run_cli(".", "--select", "KG101", "--format", "json", cwd=repo)
    assert [f["location"]["path"] for f in json.loads(result.stdout)["findings"]] == ["in.yaml", "inner.yaml"]


def test_a_config_above_the_repository_does_not_apply(tmp_path) -> None:
    repo = _repo(tmp_path)
    (tmp_path / ".kubegap-lint.yaml").write_text("select: [KG006]\n", encoding="utf-8")
    assert discover_config(repo / "in.yaml") is None
    result = run_cli("in.yaml", cwd=repo)
    assert result.returncode == 1 and b"KG101" in result.stdout


def test_a_config_in_a_parent_outside_any_repository_does_not_apply(tmp_path, monkeypatch) -> None:
    (tmp_path / ".kubegap-lint.yaml").write_text("select: [KG006]\n", encoding="utf-8")
    work = tmp_path / "pr" / "manifests"
    work.mkdir(parents=True)
    shutil.copy(SPREAD, work / "in.yaml")
    assert discover_config(work / "in.yaml") is None
    result = run_cli("manifests/in.yaml", cwd=tmp_path / "pr")
    assert result.returncode == 1 and b"KG101" in result.stdout
    # Inside the working folder the nearest config still applies.
    monkeypatch.chdir(tmp_path / "pr")
    (tmp_path / "pr" / ".kubegap-lint.yaml").write_text("select: [KG006]\n", encoding="utf-8")
    assert discover_config(work / "in.yaml") == tmp_path / "pr" / ".kubegap-lint.yaml"


def test_discovery_never_reads_above_home(tmp_path) -> None:
    home = tmp_path / "home"
    work = home / "project"
    work.mkdir(parents=True)
    shutil.copy(SPREAD, work / "in.yaml")
    (tmp_path / ".kubegap-lint.yaml").write_text("select: [KG006]\n", encoding="utf-8")
    result = run_cli(str(work / "in.yaml"), cwd=tmp_path, env={"HOME": str(home)})
    assert result.returncode == 1 and b"KG101" in result.stdout


def test_wrong_types_in_pyproject_are_one_line_errors(tmp_path) -> None:
    shutil.copy(SPREAD, tmp_path / "in.yaml")
    (tmp_path / ".git").mkdir()
    for text, expected in (
        ("tool = 1\n", b"kubegap-lint: pyproject.toml: [tool] must be a table, got int 1\n"),
        ('[tool]\nkubegap-lint = "x"\n', b"kubegap-lint: pyproject.toml: [tool.kubegap-lint] must be a table\n"),
    ):
        (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
        result = run_cli("in.yaml", "--config", "pyproject.toml", cwd=tmp_path)
        assert (result.returncode, result.stderr) == (2, expected), result.stderr


def test_symlinked_cwd_tree_is_still_the_tree(tmp_path) -> None:
    repo = _repo(tmp_path)
    alias = tmp_path / "alias"
    alias.symlink_to(repo)
    result = run_cli(".", "--select", "KG101", "--format", "json", cwd=alias)
    paths = [f["location"]["path"] for f in json.loads(result.stdout)["findings"]]
    assert paths == ["in.yaml"], paths
    assert os.path.islink(alias)

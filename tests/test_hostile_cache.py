"""Planted cache files never execute and never change results (catalog/cache.py, validcache.py)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from kubegap_lint.catalog import cache as cache_module
from kubegap_lint.catalog import validcache
from kubegap_lint.catalog.policies import load_catalog
from kubegap_lint.core.datapaths import package_folders, policies_dir, schema_path, schemas_dir
from kubegap_lint.core.errors import DataFileError

BAD = REPO / "examples" / "KG101-gpu-replicas-share-power-domain"


class _Planted:
    """A pickle that makes a folder when loaded: proof that loading ran planted code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def _plant_pickles(folder: Path, marker: Path) -> None:
    """A code-running pickle under every name a version of the tool read its caches from."""
    folder.mkdir(parents=True, exist_ok=True)
    blob = pickle.dumps(_Planted(marker))
    for name, data in (("catalog", policies_dir()), ("workloads", policies_dir())):
        key = cache_module.content_digest(name, [data, schemas_dir(), *package_folders()])
        (folder / f"{name}-{key}.pickle").write_bytes(blob)
        (folder / f"{name}.json").write_bytes(blob)


@pytest.fixture
def fresh(monkeypatch) -> None:
    monkeypatch.setattr(validcache, "_known", None)
    monkeypatch.delenv("KUBEGAP_LINT_NO_CACHE", raising=False)
    getattr(cache_module, "_linted_roots", []).clear()


def _findings(result: subprocess.CompletedProcess[bytes]) -> list[str]:
    return [line for line in result.stdout.decode().splitlines() if " KG" in line]


def test_a_planted_pickle_never_runs(tmp_path, fresh) -> None:
    folder = tmp_path / "cache"
    marker = tmp_path / "ran"
    _plant_pickles(folder, marker)
    folder.chmod(0o700)
    result = run_cli(str(BAD / "bad-no-spread.yaml"), "--select", "KG101",
                     env={"KUBEGAP_LINT_CACHE_DIR": str(folder)})
    assert not marker.exists()
    assert result.returncode == 1
    assert len(_findings(result)) == 1


def test_no_home_keeps_the_cache_out_of_the_current_folder(tmp_path, fresh) -> None:
    repo = tmp_path / "repo"
    marker = tmp_path / "ran"
    _plant_pickles(repo / "~" / ".cache" / "kubegap-lint", marker)
    shutil.copy(BAD / "bad-no-spread.yaml", repo / "job.yaml")
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOME", "XDG_CACHE_HOME", "KUBEGAP_LINT_CACHE_DIR")}
    env["PYTHONPATH"] = str(REPO)
    for extra in ({}, {"XDG_CACHE_HOME": "relative-cache"}):
        result = subprocess.run([sys.executable, "-m", "kubegap_lint", "job.yaml", "--select", "KG101"],
                                cwd=repo, env={**env, **extra}, capture_output=True, text=True)
        assert result.returncode == 1, result.stderr
        assert not marker.exists()
        assert not (repo / "relative-cache").exists()
        assert "Traceback" not in result.stderr
    assert sorted(p.name for p in repo.iterdir()) == ["job.yaml", "~"]


def test_a_cache_folder_inside_the_linted_tree_is_not_used(tmp_path, fresh) -> None:
    repo = tmp_path / "repo"
    folder = repo / ".cache"
    shutil.copy(BAD / "bad-no-spread.yaml", (repo.mkdir() or repo) / "job.yaml")
    result = run_cli(str(repo), "--select", "KG101", env={"KUBEGAP_LINT_CACHE_DIR": str(folder)})
    assert result.returncode == 1
    assert not folder.exists()
    assert b"inside the linted tree" in result.stderr


def test_a_path_that_is_not_there_makes_no_tree(tmp_path, fresh) -> None:
    # /nonexistent named no tree (its parent '/' would hold every cache folder): the cache is
    # used, and the run says only what is wrong with the path.
    folder = tmp_path / "cache"
    missing = tmp_path / "job.yaml"  # its folder holds the cache folder
    result = run_cli(str(missing), env={"KUBEGAP_LINT_CACHE_DIR": str(folder)})
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[0] == f"kubegap-lint: {missing}: no such file or folder"
    assert b"note:" not in result.stderr
    assert folder.is_dir()


def test_folders_are_created_private_under_any_umask(tmp_path, fresh) -> None:
    folder = tmp_path / "a" / "b" / "cache"
    manifest = tmp_path / "src" / "job.yaml"
    manifest.parent.mkdir()
    shutil.copy(BAD / "bad-no-spread.yaml", manifest)
    env = {**os.environ, "PYTHONPATH": str(REPO), "KUBEGAP_LINT_CACHE_DIR": str(folder)}
    result = subprocess.run([sys.executable, "-m", "kubegap_lint", str(manifest)], env=env,
                            capture_output=True, text=True, preexec_fn=lambda: os.umask(0))
    assert result.returncode == 1, result.stderr
    for part in (tmp_path / "a", tmp_path / "a" / "b", folder):
        assert part.stat().st_mode & 0o777 == 0o700, part
    for file in folder.iterdir():
        assert file.stat().st_mode & 0o077 == 0, file


def test_a_folder_others_can_write_is_not_read(tmp_path, fresh, monkeypatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("KUBEGAP_LINT_CACHE_DIR", str(folder))
    load_catalog()
    assert (folder / "catalog.json").is_file()
    folder.chmod(0o777)
    monkeypatch.setattr(cache_module, "_noted", set())
    assert cache_module.cache_dir() is None
    assert any("writable by other users" in n for n in cache_module._noted)


def _rewrite(path: Path, change) -> None:
    """Change a cache file's data and give it a correct digest: what only the owner could do."""
    header, _, payload = path.read_bytes().partition(b"\n\n")
    magic, key, _ = header.split(b"\n")
    data = change(json.loads(payload))
    payload = json.dumps(data).encode()
    path.write_bytes(magic + b"\n" + key + b"\n" + hashlib.sha256(payload).hexdigest().encode()
                     + b"\n\n" + payload)


def test_a_catalog_cache_without_the_workload_rules_changes_nothing(tmp_path, fresh) -> None:
    folder = tmp_path / "cache"
    env = {"KUBEGAP_LINT_CACHE_DIR": str(folder)}
    target = str(BAD / "bad-no-spread.yaml")
    first = run_cli(target, env=env)
    assert first.returncode == 1 and _findings(first)

    def inputs_only(data):
        data["policies"] = [p for p in data["policies"] if p["data"].get("scope") == "input"]
        return data

    _rewrite(folder / "catalog.json", inputs_only)
    second = run_cli(target, env=env)
    assert second.stdout == first.stdout and second.returncode == 1
    assert b"does not match the policy files" in second.stderr


def test_an_ast_written_into_the_catalog_cache_changes_nothing(tmp_path, fresh) -> None:
    """The cache holds policy texts, never parsed expressions: an edited entry (a correct
    digest) that carries another AST for a policy's expression is not read."""
    folder = tmp_path / "cache"
    env = {"KUBEGAP_LINT_CACHE_DIR": str(folder)}
    target = str(BAD / "bad-no-spread.yaml")
    first = run_cli(target, "--select", "KG101", env=env)
    assert first.returncode == 1 and _findings(first)

    def other_asts(data):
        never = {"type": "literal", "value": False, "children": []}
        data["asts"] = {p["data"]["violation"]: never for p in data["policies"] if "violation" in p["data"]}
        for record in data["policies"]:
            record["ast"] = never
        return data

    _rewrite(folder / "catalog.json", other_asts)
    second = run_cli(target, "--select", "KG101", env=env)
    assert second.stdout == first.stdout and second.returncode == 1


def test_a_damaged_or_symlinked_cache_file_is_ignored(tmp_path, fresh, monkeypatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("KUBEGAP_LINT_CACHE_DIR", str(folder))
    expected = [p.id for p in load_catalog().policies]
    path = folder / "catalog.json"
    path.write_bytes(path.read_bytes().replace(b'"KG501"', b'"KG999"'))
    monkeypatch.setattr(cache_module, "_noted", set())
    assert [p.id for p in load_catalog().policies] == expected
    assert any("does not match its digest" in n for n in cache_module._noted)
    elsewhere = tmp_path / "elsewhere.json"
    shutil.copy(path, elsewhere)
    path.unlink()
    path.symlink_to(elsewhere)
    assert cache_module.load("catalog", "x") is None


def test_a_poisoned_validation_cache_skips_no_schema_check(tmp_path, fresh, monkeypatch) -> None:
    policies = tmp_path / "mine"
    policies.mkdir()
    broken = policies / "KG900-broken-rule.yaml"
    broken.write_text((REPO / "policies" / "KG501-gpu-shm-default.yaml")
                      .read_text(encoding="utf-8").replace("id: KG501", "id: KG900")
                      .replace("name: gpu-shm-default", "name: broken-rule")
                      .replace("severity: warning", "severity: loud"), encoding="utf-8")
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)  # a folder another user can write to
    key = validcache.digest(schema_path("policy.schema.json"), broken.read_text(encoding="utf-8"))
    (folder / validcache.CACHE_FILE).write_text(key + "\n", encoding="ascii")
    monkeypatch.setenv("KUBEGAP_LINT_CACHE_DIR", str(folder))
    with pytest.raises(DataFileError) as raised:
        load_catalog([policies])
    assert "severity" in str(raised.value)

"""The start-up caches (catalogcache.py, validcache.py) change nothing but the time taken."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from kubegap_lint.catalog import policies as catalog_module
from kubegap_lint.catalog import validcache
from kubegap_lint.catalog.policies import load_catalog
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.workloads.kinds import load_kind_table

CLEAN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: '1'\n"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("KUBEGAP_LINT_CACHE_DIR", str(folder))
    monkeypatch.delenv("KUBEGAP_LINT_NO_CACHE", raising=False)
    monkeypatch.setattr(validcache, "_known", None)
    return folder


def _summary(catalog) -> list[tuple]:
    return [(p.id, p.name, p.severity, p.message.text if p.message else None, p.evidence, p.path)
            for p in catalog.policies] + sorted((k, v.title, v.urls) for k, v in catalog.incidents.items())


def test_second_load_comes_from_the_cache_and_is_the_same(cache, monkeypatch) -> None:
    first = load_catalog()
    assert list(cache.glob("catalog.json"))

    def refuse(*args, **kwargs):
        raise AssertionError("the built-in catalog was loaded from the files again")

    monkeypatch.setattr(catalog_module, "_load_catalog", refuse)
    second = load_catalog()
    assert _summary(second) == _summary(first)
    for a, b in zip(first.policies, second.policies, strict=False):
        if a.applies_to is not None:
            assert (a.applies_to.expression, a.applies_to.parsed) == (b.applies_to.expression, b.applies_to.parsed)
    assert sorted(load_kind_table().kinds()) == sorted(load_kind_table().kinds())


def test_an_edited_policy_is_validated_again(cache, tmp_path, monkeypatch) -> None:
    policies = tmp_path / "policies"
    shutil.copytree(REPO / "policies", policies)
    monkeypatch.setenv("KUBEGAP_LINT_POLICIES", str(policies))
    load_catalog()  # valid: cached
    target = next(policies.glob("KG501-*.yaml"))
    target.write_text(target.read_text(encoding="utf-8").replace("severity: warning", "severity: loud"),
                      encoding="utf-8")
    with pytest.raises(DataFileError) as raised:
        load_catalog()
    assert "severity" in str(raised.value)


def test_an_unwritable_cache_folder_changes_nothing(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("KUBEGAP_LINT_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(validcache, "_known", None)
    assert _summary(load_catalog()) == _summary(catalog_module._load_catalog([], None))


def test_a_corrupt_cache_file_is_ignored(cache) -> None:
    expected = _summary(load_catalog())
    for path in cache.glob("*.json"):
        path.write_bytes(b"not a pickle")
    assert _summary(load_catalog()) == expected


def test_warm_start_imports_no_jsonschema_and_prints_the_same(tmp_path) -> None:
    (tmp_path / "src").mkdir()  # not the cache's parent: a cache inside a linted tree is not used
    manifest = tmp_path / "src" / "one.yaml"
    manifest.write_text(CLEAN, encoding="utf-8")
    env = {"KUBEGAP_LINT_CACHE_DIR": str(tmp_path / "cache")}
    runs = []
    for _ in range(2):
        result = run_cli(str(manifest), env=env)
        runs.append(result)
    assert runs[0].returncode == runs[1].returncode == 0
    assert runs[0].stdout == runs[1].stdout
    uncached = run_cli(str(manifest), env={"KUBEGAP_LINT_NO_CACHE": "1"})
    assert uncached.stdout == runs[1].stdout
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys; sys.argv=['kubegap-lint', sys.argv[1]];"
         "import kubegap_lint.cli.main as c\ntry:\n c.main()\nexcept SystemExit:\n pass\n"
         "print('jsonschema' in sys.modules, file=sys.stderr)", str(manifest)],
        capture_output=True, text=True, cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )
    assert probe.stderr.strip().splitlines()[-1] == "False"


def test_a_warm_load_parses_an_expression_at_its_first_use_from_its_own_text(cache, monkeypatch) -> None:
    import jmespath

    first = load_catalog()
    parsed: list[str] = []
    real = jmespath.compile
    monkeypatch.setattr(jmespath, "compile", lambda text: parsed.append(text) or real(text))
    second = load_catalog()
    assert parsed == []  # a run that evaluates nothing parses nothing
    pairs = [(a, b) for p, q in zip(first.policies, second.policies, strict=True)
             for a, b in zip(catalog_module.expressions(p), catalog_module.expressions(q), strict=True)]
    assert len(pairs) > 100
    for (field_a, a), (field_b, b) in pairs:
        assert field_a == field_b and a.expression == b.expression
        assert b.parsed == a.parsed  # parsed now, from the cached policy's own text
    assert sorted(set(parsed)) == sorted({b.expression for _, (_, b) in pairs})


def test_the_pattern_check_parses_only_expressions_that_call_match(cache, monkeypatch) -> None:
    import jmespath

    from kubegap_lint.config.settings import Settings
    from kubegap_lint.core.record import replace
    from kubegap_lint.engine.run import Linter

    load_catalog()
    warm = load_catalog()
    parsed: list[str] = []
    real = jmespath.compile
    monkeypatch.setattr(jmespath, "compile", lambda text: parsed.append(text) or real(text))
    Linter(catalog=warm)
    assert parsed == []  # checked when the cache was made, with the same parameters
    Linter(Settings(params={"gpu_resources": ["nvidia.com/gpu"]}), catalog=warm)  # others: again
    assert parsed and all("match" in text for text in parsed)
    assert set(parsed) == {b.expression for p in warm.policies for _, b in catalog_module.expressions(p)
                           if "match" in b.expression}
    broken = replace(warm.policies[0], applies_to=catalog_module.LazyExpression("match('(', kind)"))
    with pytest.raises(DataFileError) as raised:
        Linter(catalog=replace(warm, policies=[broken, *warm.policies[1:]]))
    assert "applies_to" in str(raised.value) and "does not compile" in str(raised.value)


def test_outside_a_work_tree_git_is_not_started(tmp_path, monkeypatch) -> None:
    from kubegap_lint.input import git

    started: list[tuple[str, ...]] = []
    monkeypatch.setattr(git, "_git", lambda folder, *args: started.append(args) or None)
    for name in git._DISCOVERY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    git._top_level.cache_clear()
    (tmp_path / "plain").mkdir()
    assert git.top_level(str(tmp_path / "plain")) is None
    assert started == []
    (tmp_path / "repo" / ".git").mkdir(parents=True)  # a .git above: git is asked
    (tmp_path / "repo" / "sub").mkdir()
    git.top_level(str(tmp_path / "repo" / "sub"))
    for name in ("a.yaml", "b.yaml"):  # files of one folder: git is asked once for the folder
        git.top_level(str(tmp_path / "repo" / "sub" / name))
    assert started == [("rev-parse", "--show-toplevel")]
    for folder in ("other", "other/deeper", ""):  # other folders whose search ends at that .git
        (tmp_path / "repo" / folder).mkdir(parents=True, exist_ok=True)
        git.top_level(str(tmp_path / "repo" / folder / "c.yaml"))
    assert len(started) == 1
    git.top_level(str(tmp_path / "repo" / ".git" / "config"))  # inside the .git: its own question
    assert len(started) == 2
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path / "repo"))  # the search changes
    git._top_level.cache_clear()
    git.top_level(str(tmp_path / "repo" / "sub" / "a.yaml"))
    assert len(started) == 3
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES")
    started.clear()
    started.append(("rev-parse", "--show-toplevel"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # git may find a repository anyway
    git._top_level.cache_clear()
    git.top_level(str(tmp_path / "plain"))
    assert len(started) == 2
    git._top_level.cache_clear()


def test_a_changed_module_changes_the_code_digest(tmp_path) -> None:
    import os

    from kubegap_lint.catalog import cache as cache_module

    (tmp_path / "m.py").write_text("x = 1\n", encoding="utf-8")
    before = cache_module.code_digest((tmp_path,))
    os.utime(tmp_path / "m.py", ns=(1, 1))
    cache_module.code_digest.cache_clear()
    assert cache_module.code_digest((tmp_path,)) != before
    cache_module.code_digest.cache_clear()


def test_a_clean_file_without_workloads_imports_only_what_it_uses(tmp_path) -> None:
    (tmp_path / "src").mkdir()
    manifest = tmp_path / "src" / "one.yaml"
    manifest.write_text(CLEAN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "KUBEGAP_LINT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("KUBEGAP_LINT_NO_CACHE", None)
    # Not even what the bare `import ruamel.yaml, click, jmespath` pays: no policy is evaluated.
    unused = ["jsonschema", "tempfile", "subprocess", "shutil", "kubegap_lint.workloads.views",
              "kubegap_lint.workloads.facts", "kubegap_lint.engine.estimate", "jmespath",
              "kubegap_lint.catalog.functions", "kubegap_lint.engine.evaluate", "kubegap_lint.engine.locate",
              "kubegap_lint.cli.helm", "hashlib"]
    # dataclasses is imported: core/model.py's Finding is one (issue 28: about 4 ms, the module
    # and the class, under the 10 ms it was allowed).
    code = ("import sys; sys.argv=['kubegap-lint', sys.argv[1]];"
            "import kubegap_lint.cli.main as c\ntry:\n c.main()\nexcept SystemExit:\n pass\n"
            f"print([m for m in {unused!r} if m in sys.modules], file=sys.stderr)")
    runs = [subprocess.run([sys.executable, "-c", code, str(manifest)], capture_output=True, text=True,
                           cwd=str(tmp_path), env=env) for _ in range(2)]
    assert runs[1].stderr.strip().splitlines()[-1] == "[]", runs[1].stderr


def test_main_pauses_the_collector_and_leaves_it_as_it_found_it(tmp_path, monkeypatch) -> None:
    import gc

    from kubegap_lint.catalog import policies
    from kubegap_lint.cli import main as cli_main

    (tmp_path / "src").mkdir()
    manifest = tmp_path / "src" / "one.yaml"
    manifest.write_text(CLEAN, encoding="utf-8")
    monkeypatch.setenv("KUBEGAP_LINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(validcache, "_known", None)
    states: list[bool] = []
    real = policies.load_catalog
    monkeypatch.setattr(policies, "load_catalog", lambda *a, **k: states.append(gc.isenabled()) or real(*a, **k))
    monkeypatch.setattr(sys, "argv", ["kubegap-lint", str(manifest)])
    assert gc.isenabled()
    with pytest.raises(SystemExit) as ended:
        cli_main.main()
    assert ended.value.code == 0
    assert states == [False]  # start-up ran without the collector
    assert gc.isenabled() and gc.get_freeze_count() == 0  # and it is back as it was

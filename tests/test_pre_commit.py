"""The pre-commit hooks end to end, with the real pre-commit: it installs this project into a
fresh virtualenv (from PyPI: network needed) and runs the hook in a throw-away git repository.

The hook repository is a copy of this checkout's files committed in a temporary repository, so
the test sees uncommitted work, never writes to the checkout, and does not depend on how the
checkout was cloned."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, GPU_DEPLOYMENT, PDB, REPO

pytestmark = pytest.mark.slow  # the real pre-commit: a new interpreter and a hook install per test

GPU_JOB = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

pytest.importorskip("pre_commit")  # the `test` extra installs it
if shutil.which("git") is None:
    pytest.skip("git is needed to run pre-commit", allow_module_level=True)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def _commit_all(repo: Path) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "state")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's files, committed in a repository of their own."""
    repo = tmp_path_factory.mktemp("hook-repo") / "kubegap-lint"
    shutil.copytree(REPO, repo, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", ".pytest_cache", "*.egg-info", "build", "dist", ".venv", ".hypothesis"))
    _git(repo, "init", "-q")
    _commit_all(repo)
    return repo


def _try_repo(hook_repo: Path, project: Path, hook: str, env: dict[str, str] | None = None,
              all_files: bool = True):
    """`pre-commit try-repo`; without all_files, on the staged files, as a commit runs it."""
    full_env = {**os.environ, **GIT_ENV, "PRE_COMMIT_COLOR": "never", **(env or {})}
    full_env.pop("PYTHONPATH", None)  # the hook must run the installed package, not this checkout
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook,
         *(["--all-files"] if all_files else []), "--verbose"],
        cwd=project, capture_output=True, env=full_env, timeout=1200,
    )


def test_manifest_is_valid() -> None:
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest",
                           str(REPO / ".pre-commit-hooks.yaml")], capture_output=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_kubegap_lint_hook_fails_on_the_gpu_job_and_passes_without_it(hook_repo: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "deploy").mkdir(parents=True)
    (project / "deploy" / "job.yaml").write_text(GPU_JOB)
    (project / "deploy" / "configmap.yaml").write_text(CONFIGMAP)
    # A chart's template is not YAML until rendered: the hook must pass over it.
    shutil.copytree(EXAMPLES / "helm" / "gpu-train", project / "chart")
    _git(project, "init", "-q")
    _commit_all(project)
    before = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True).stdout

    proc = _try_repo(hook_repo, project, "kubegap-lint")
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "Failed" in out
    assert "deploy/job.yaml:9:5: error KG201 training-checkpoint-volume: Job finetune" in out
    assert "configmap.yaml:" not in out
    assert "chart/templates" not in out and "KG003" not in out

    _git(project, "rm", "-q", "deploy/job.yaml")
    _commit_all(project)
    proc = _try_repo(hook_repo, project, "kubegap-lint")
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "Passed" in out
    # The checkout is untouched.
    after = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True).stdout
    assert after == before


def test_kubegap_lint_helm_hook(hook_repo: Path, tmp_path: Path) -> None:
    """The hook as shipped: pre-commit installs the Helm engine (additional_dependencies), no
    helm binary anywhere; the hook's args pass the release and namespace."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "helm" / "gpu-train", project / "charts" / "gpu-train")
    (project / "README.md").write_text("not a chart file\n")
    _git(project, "init", "-q")
    config = project / ".pre-commit-config.yaml"
    config.write_text(
        "repos:\n"
        f"  - repo: {hook_repo}\n"
        f"    rev: {subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=hook_repo, capture_output=True, text=True).stdout.strip()}\n"
        "    hooks:\n"
        "      - id: kubegap-lint-helm\n"
        "        args: [--release, demo, --namespace, ml]\n"
    )
    _commit_all(project)
    no_helm = tmp_path / "bin"
    no_helm.mkdir()
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if not (Path(p) / "helm").exists())
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_COLOR": "never", "PRE_COMMIT_HOME": str(tmp_path / "store"),
           "PATH": path}
    env.pop("PYTHONPATH", None)
    run = [sys.executable, "-m", "pre_commit", "run", "kubegap-lint-helm", "--all-files", "--verbose"]
    proc = subprocess.run(run, cwd=project, capture_output=True, env=env, timeout=1800)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "charts/gpu-train/templates/job.yaml:47:7: error KG201" in out
    assert "(rendered at <helm template charts/gpu-train>:103:7)" in out
    assert "KG003" not in out

    # Only the chart's own files trigger it: a change elsewhere renders nothing.
    proc = subprocess.run([*run[:-2], "--files", "README.md"], cwd=project, capture_output=True, env=env,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout.decode()


def test_partial_commit_sees_the_pdb_committed_beside_it(hook_repo: Path, tmp_path: Path) -> None:
    """The issue's scenario: a GPU Deployment and the PDB that selects it are committed; the
    Deployment alone is edited and staged. pre-commit passes only it; no KG103. Removing the PDB
    from the repository (a negative control) brings KG103 back on the same partial run."""
    project = tmp_path / "project"
    (project / "deploy").mkdir(parents=True)
    (project / "deploy" / "app.yaml").write_text(GPU_DEPLOYMENT)
    (project / "deploy" / "pdb.yaml").write_text(PDB)
    # An exemption for a file this commit does not touch: not "unused" on the partial run.
    (project / "other").mkdir()
    (project / "other" / "job.yaml").write_text(GPU_JOB)
    (project / ".kubegap-lint.yaml").write_text(
        "select: [KG103, KG201, KG005]\n"
        "exemptions:\n  - rules: [KG201]\n    paths: [other/*.yaml]\n    reason: legacy job, replaced in Q3\n")
    _git(project, "init", "-q")
    _commit_all(project)

    (project / "deploy" / "app.yaml").write_text(GPU_DEPLOYMENT.replace("replicas: 2", "replicas: 3"))
    _git(project, "add", "deploy/app.yaml")
    proc = _try_repo(hook_repo, project, "kubegap-lint", all_files=False)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "1 file, 1 document (0 empty, 0 not Kubernetes), 1 resource, 1 workload: 0 errors," \
           " 0 warnings, 0 notes" in out
    assert "KG103" not in out and "KG005" not in out

    _git(project, "rm", "-q", "deploy/pdb.yaml")
    _commit_all(project)
    (project / "deploy" / "app.yaml").write_text(GPU_DEPLOYMENT.replace("replicas: 2", "replicas: 4"))
    _git(project, "add", "deploy/app.yaml")
    proc = _try_repo(hook_repo, project, "kubegap-lint", all_files=False)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out
    assert "deploy/app.yaml:11:7: warning KG103 gpu-serving-without-pdb: Deployment infer" in out
    assert "KG005" not in out


def _snippet_config(snippet: dict[str, object], hook_repo: Path, project: Path) -> Path:
    """The snippet with its repository and rev pointed at the hook repository's commit."""
    import json

    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True).stdout.strip()
    repos = [{**repo, "repo": str(hook_repo), "rev": rev} for repo in snippet["repos"]]  # type: ignore[attr-defined]
    config = project / ".pre-commit-config.yaml"
    config.write_text(json.dumps({**snippet, "repos": repos}, indent=2))  # JSON is YAML
    return config


def test_pre_commit_snippets_run_for_real(hook_repo: Path, tmp_path: Path) -> None:
    """Each pre-commit snippet of the README and docs/ as a user pastes it (the repository and
    rev pointed at this checkout's commit): the manifest hook fails on the GPU Job, and the helm
    hook takes the snippet's args (without helm on PATH it says so, not a usage error)."""
    from test_snippets import pre_commit_snippets

    snippets = pre_commit_snippets()
    assert len(snippets) >= 2
    for number, (where, snippet) in enumerate(snippets):
        project = tmp_path / f"project-{number}"
        (project / "deploy").mkdir(parents=True)
        (project / "deploy" / "job.yaml").write_text(GPU_JOB)
        (project / "ci").mkdir()
        (project / "ci" / "values.yaml").write_text("replicas: 1\n")
        shutil.copytree(EXAMPLES / "helm" / "gpu-train", project / "charts" / "gpu-train")
        _git(project, "init", "-q")
        _snippet_config(snippet, hook_repo, project)
        _commit_all(project)
        env = {**os.environ, **GIT_ENV, "PRE_COMMIT_COLOR": "never",
               "PATH": os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                       if not (Path(p) / "helm").exists())}
        env.pop("PYTHONPATH", None)
        proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "kubegap-lint", "--all-files"],
                              cwd=project, capture_output=True, env=env, timeout=1200)
        out = proc.stdout.decode()
        assert proc.returncode == 1, f"{where}: {out}{proc.stderr.decode()}"
        assert "deploy/job.yaml:9:5: error KG201 training-checkpoint-volume" in out, where
        assert "chart" not in out.split("deploy/job.yaml")[0], where  # templates skipped
        hooks = {hook.get("id") for repo in snippet["repos"] for hook in repo.get("hooks") or []}
        if "kubegap-lint-helm" not in hooks:  # a snippet of other hooks (docs/kustomize.md)
            continue
        proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "kubegap-lint-helm", "--all-files"],
                              cwd=project, capture_output=True, env=env, timeout=1200)
        out = proc.stdout.decode()
        # The snippet's args are the helm command's own (a usage error would say so), and the
        # chart is rendered in-process: findings point at its templates.
        assert "No such option" not in out and "Usage:" not in out, f"{where}: {out}"
        assert proc.returncode == 1 and "charts/gpu-train/templates/" in out, f"{where}: {out}"


def test_deleting_or_loosening_the_pdb_fails_the_commit(hook_repo: Path, tmp_path: Path) -> None:
    """A commit that only deletes the PDB of a GPU Deployment (or changes its selector) touches
    no workload: the hook still fails, on the Deployment's file, labelled with the change."""
    project = tmp_path / "project"
    (project / "deploy").mkdir(parents=True)
    (project / "deploy" / "app.yaml").write_text(GPU_DEPLOYMENT)
    (project / "deploy" / "pdb.yaml").write_text(PDB)
    (project / ".kubegap-lint.yaml").write_text("select: [KG103, KG201]\n")
    _git(project, "init", "-q")
    _commit_all(project)
    finding = ("deploy/app.yaml:11:7: warning KG103 gpu-serving-without-pdb: Deployment infer: no"
               " PodDisruptionBudget in the input selects its GPU pods")

    _git(project, "rm", "-q", "deploy/pdb.yaml")  # staged: the commit's only change
    proc = _try_repo(hook_repo, project, "kubegap-lint", all_files=False)
    out = proc.stdout.decode()
    assert proc.returncode == 1 and "Failed" in out, out + proc.stderr.decode()
    assert finding in out and "(caused by the change to deploy/pdb.yaml (deleted))" in out

    _git(project, "reset", "-q", "--hard")
    (project / "deploy" / "pdb.yaml").write_text(PDB.replace("matchLabels: {app: infer}", "matchLabels: {app: other}"))
    _git(project, "add", "deploy/pdb.yaml")
    proc = _try_repo(hook_repo, project, "kubegap-lint", all_files=False)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert finding in out and "(caused by the change to deploy/pdb.yaml)" in out

    _git(project, "reset", "-q", "--hard")  # the guard kept: nothing to say
    (project / "deploy" / "pdb.yaml").write_text(PDB.replace("maxUnavailable: 1", "maxUnavailable: 2"))
    _git(project, "add", "deploy/pdb.yaml")
    proc = _try_repo(hook_repo, project, "kubegap-lint", all_files=False)
    assert proc.returncode == 0 and "Passed" in proc.stdout.decode(), proc.stdout.decode()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH: the real renderer is needed")
def test_kubegap_lint_kustomize_hook_relints_the_overlays_of_a_changed_base(hook_repo: Path, tmp_path: Path) -> None:
    """The kustomize hook as shipped: a change to a base's file renders and lints the base and
    every overlay that includes it; a change to a patch only its overlay; any other file nothing."""
    from test_kustomize import write_tree

    project = write_tree(tmp_path / "project")
    (project / "README.md").write_text("not a kustomize file\n")
    _git(project, "init", "-q")
    _commit_all(project)
    before = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True).stdout

    def hook(*files: str) -> tuple[int, str]:
        env = {**os.environ, **GIT_ENV, "PRE_COMMIT_COLOR": "never", "PRE_COMMIT_HOME": str(tmp_path / "store")}
        env.pop("PYTHONPATH", None)
        run = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "kubegap-lint-kustomize",
               "--verbose", "--files", *files]
        proc = subprocess.run(run, cwd=project, capture_output=True, env=env, timeout=1800)
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()

    code, out = hook("base/job.yaml")
    assert code == 1, out
    assert "base/job.yaml:17:15: warning KG305 nccl-env-unknown: Job train:" in out
    assert "(rendered at <kustomize build base>:18:11)" in out
    assert "overlay/smp.yaml:11:15: warning KG305 nccl-env-unknown: Job prod-train:" in out
    code, out = hook("overlay/smp.yaml")
    assert code == 1 and "<kustomize build overlay>" in out and "<kustomize build base>" not in out, out
    code, out = hook("README.md")
    assert code == 0 and "<kustomize build" not in out, out
    after = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True).stdout
    assert after == before  # the hook writes nothing into the repository


def test_kubegap_lint_fix_hook_fixes_the_staged_file_and_fails_the_commit(hook_repo: Path, tmp_path: Path) -> None:
    """The fix hook writes the safe fix (pre-commit then fails: a file changed); a second run
    finds nothing to fix, and only the findings it cannot fix are left."""
    fixtures = Path(__file__).parent / "fixtures" / "autofix"
    project = tmp_path / "project"
    (project / "deploy").mkdir(parents=True)
    shutil.copyfile(fixtures / "KG503-deployment.input.yaml", project / "deploy" / "llm.yaml")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    proc = _try_repo(hook_repo, project, "kubegap-lint-fix", all_files=False)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "files were modified by this hook" in out
    assert (project / "deploy" / "llm.yaml").read_bytes() == (fixtures / "KG503-deployment.fixed.yaml").read_bytes()
    assert "fixed 2 finding(s) in 1 file(s) (KG503 2)" in out
    _git(project, "add", "-A")
    again = _try_repo(hook_repo, project, "kubegap-lint-fix", all_files=False)
    assert "files were modified by this hook" not in again.stdout.decode()
    assert (project / "deploy" / "llm.yaml").read_bytes() == (fixtures / "KG503-deployment.fixed.yaml").read_bytes()

import os
from pathlib import Path

from kubegap_lint.input.sources import discover


def test_walk_is_sorted_recursive_and_skips_hidden(tmp_path: Path) -> None:
    for name in ["b.yaml", "a/z.yml", "a/y.json", "a/.hidden.yaml", ".git/x.yaml", "c.txt", "a/b/k.YAML"]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("a: 1\n")
    sources, errors = discover([str(tmp_path)])
    rel = [os.path.relpath(s.fs_path, tmp_path) for s in sources]
    assert rel == ["a/b/k.YAML", "a/y.json", "a/z.yml", "b.yaml"]
    assert errors == []


def test_missing_path_and_fifo_are_errors_not_hangs(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    sources, errors = discover([str(tmp_path / "nope.yaml"), str(fifo), str(tmp_path)])
    assert sources == []
    assert [e.message for e in errors] == ["no such file or folder", "not a regular file (FIFO, device or socket)"]


def test_stdin_and_excludes(tmp_path: Path) -> None:
    (tmp_path / "keep.yaml").write_text("a: 1\n")
    (tmp_path / "skip.yaml").write_text("a: 1\n")
    sources, _ = discover(["-", str(tmp_path)], excludes=["skip.yaml"])
    assert [s.display for s in sources][0] == "<stdin>"
    assert [Path(s.display).name for s in sources[1:]] == ["keep.yaml"]


def test_symlink_loop_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "m.yaml").write_text("a: 1\n")
    (tmp_path / "d" / "loop").symlink_to(tmp_path / "d")
    sources, _ = discover([str(tmp_path)])
    assert [Path(s.display).name for s in sources] == ["m.yaml"]

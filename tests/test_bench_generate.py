"""The benchmark's stream generator: deterministic, well-formed, and the JSON lines hold the same data."""

from __future__ import annotations

import io
import json
from collections import Counter

from conftest import load_bench_generator

from kubegap_lint.input.parse import parse_chunk
from kubegap_lint.input.scan import split_documents


def _stream(count: int, seed: int) -> tuple[str, str]:
    yaml_out, json_out = io.StringIO(), io.StringIO()
    load_bench_generator().write_stream(count, seed, yaml_out, json_out)
    return yaml_out.getvalue(), json_out.getvalue()


def test_same_size_and_seed_give_the_same_bytes() -> None:
    assert _stream(120, 7) == _stream(120, 7)
    assert _stream(120, 7)[0] != _stream(120, 8)[0]


def test_every_document_parses_to_its_json_line_with_a_source_header() -> None:
    text, lines = _stream(200, 7)
    chunks = [c for c in split_documents(text.splitlines(True)) if c.has_content]
    records = [json.loads(line) for line in lines.splitlines()]
    assert len(chunks) == len(records) == 200
    for chunk, record in zip(chunks, records, strict=False):
        parsed = parse_chunk(chunk)
        assert not parsed.problems
        assert parsed.data == record
        assert chunk.helm_source and chunk.helm_source.endswith(".yaml")


def test_the_mix_has_the_kinds_and_gpu_documents_of_about_5_kb() -> None:
    text, lines = _stream(400, 7)
    records = [json.loads(line) for line in lines.splitlines()]
    kinds = Counter(r["kind"] for r in records)
    for kind in ("Deployment", "StatefulSet", "Service", "ConfigMap", "Job", "PyTorchJob", "JobSet",
                 "LeaderWorkerSet", "RayCluster"):
        assert kinds[kind] > 0, kind
    gpu_sizes = [len(json.dumps(r)) for r in records if "nvidia.com/gpu" in json.dumps(r) or "amd.com/gpu" in json.dumps(r)]
    assert len(gpu_sizes) > 100
    assert 3_000 < sorted(gpu_sizes)[len(gpu_sizes) // 2] < 12_000
    assert "NCCL_" in text and "volumeMounts" in text


def test_the_stream_has_findings(linter_factory) -> None:
    text, _ = _stream(100, 7)
    result = linter_factory().lint_texts([("stream.yaml", text)])
    assert result.stats.documents == 100 and not result.errors
    assert {f.rule_id for f in result.findings} >= {"KG501"}


def test_the_pre_commit_repository_is_one_plain_manifest_a_file_and_deterministic(tmp_path) -> None:
    generator = load_bench_generator()
    first = generator.write_repository(tmp_path / "a", 230, 7)
    second = generator.write_repository(tmp_path / "b", 230, 7)
    assert len(first) == 230 and len({p.parent.name for p in first}) == 3  # folders of 100
    for one, other in zip(first, second, strict=True):
        assert one.relative_to(tmp_path / "a") == other.relative_to(tmp_path / "b")
        assert one.read_bytes() == other.read_bytes()
    text = first[0].read_text(encoding="utf-8")
    assert "# Source:" not in text and "---" not in text
    chunks = [c for c in split_documents(text.splitlines(True)) if c.has_content]
    assert len(chunks) == 1

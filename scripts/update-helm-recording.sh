#!/bin/sh
# Regenerate examples/helm/rendered.yaml: the example chart rendered by the Helm engine
# (`pip install -e '.[helm]'`), byte for byte what `helm template demo examples/helm/gpu-train
# --namespace ml` prints. tests/test_helm_engine.py checks that the two stay equal.
set -eu
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
kubegap-lint helm examples/helm/gpu-train --release demo --namespace ml --keep-rendered "$scratch" \
  --select KG201 --format json >/dev/null || [ $? -eq 1 ]
cp "$scratch/gpu-train.yaml" examples/helm/rendered.yaml

#!/usr/bin/env bash
# The install users get: a clean virtual environment, `pip install .` with no extras, then the
# README's main command and a short training comparison. Fails unless every run finished and
# the training runs wrote their TensorBoard scalars. (The test lanes install the `test` extra,
# which once hid a runtime dependency that only an extra brought.)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$ROOT"
export PATH="$work/venv/bin:$PATH" QT_QPA_PLATFORM=offscreen

# Outside the source tree, so nothing is imported from the checkout by accident.
mkdir "$work/quick" && cd "$work/quick"
xlagui compare --demo --quick
"$work/venv/bin/python" "$ROOT/.ci/check_comparison.py" quick "$(ls -d "$work"/quick/xlagui-*)"

mkdir "$work/train" && cd "$work/train"
xlagui compare --demo --epochs 1 --image-size 48 --out "$work/train/out"
"$work/venv/bin/python" "$ROOT/.ci/check_comparison.py" train "$work/train/out"

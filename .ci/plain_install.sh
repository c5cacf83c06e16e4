#!/usr/bin/env bash
# The install users get: a clean virtual environment, `pip install .` with no extras, then
#  1. the README's first command, verbatim (`xlagui compare --demo --quick`: the only check of
#     the main job at the article's 150 px, the why included), and
#  2. what that command does not cover: a short training comparison (training runs and their
#     TensorBoard scalars) at 48 px, without the why.
# Fails unless every run finished (.ci/check_comparison.py). (The test lanes install the `test`
# extra, which once hid a runtime dependency that only an extra brought.) Each step prints its
# time, and writes it to $XLAGUI_CI_STEPS when set (.ci/lanes.py names the slowest).
#
#   bash .ci/plain_install.sh                     # the whole lane: install, then run
#   bash .ci/plain_install.sh --install-only DIR  # only the venv and `pip install .`, into DIR/venv
#   XLAGUI_CI_PLAIN_VENV=DIR/venv bash .ci/plain_install.sh   # run with that venv, installed before
#
# .ci/run installs during the fast lane (the install waits on the disk and the index, the fast
# lane on the CPUs) and runs with that venv after it: the same install, a minute less of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=$work/venv
if [ "${1:-}" = "--install-only" ]; then
  venv=${2:?--install-only needs a folder}/venv
fi

step() {  # step NAME COMMAND...: run it and say how long it took
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "ci: plain-install step '$name' took $((SECONDS - start)) s"
  if [ -n "${XLAGUI_CI_STEPS:-}" ]; then
    printf '%s\t%s\n' "$((SECONDS - start))" "$name" >> "$XLAGUI_CI_STEPS"
  fi
}

if [ -n "${XLAGUI_CI_PLAIN_VENV:-}" ] && [ "${1:-}" != "--install-only" ]; then
  venv=$XLAGUI_CI_PLAIN_VENV  # installed before (its steps' times are in its own log)
  [ -x "$venv/bin/xlagui" ] || { echo "ci: no xlagui in $venv: the install failed"; exit 1; }
else
  step "venv" "$PYTHON" -m venv "$venv"
  step "pip install ." "$venv/bin/python" -m pip install -q "$ROOT"
  if [ "${1:-}" = "--install-only" ]; then
    exit 0
  fi
fi
export PATH="$venv/bin:$PATH" QT_QPA_PLATFORM=offscreen
# A fresh machine's user has no cache and no history: the demo set is drawn and the machine's
# peak probed within this lane's time, as they are on a user's first run (a machine used
# before keeps both in the user's cache folder, and would hide their cost).
export XLAGUI_CACHE_DIR="$work/cache" XLAGUI_DATA_DIR="$work/data"

# Outside the source tree, so nothing is imported from the checkout by accident.
mkdir "$work/quick" && cd "$work/quick"
step "xlagui compare --demo --quick" xlagui compare --demo --quick
step "check quick" python "$ROOT/.ci/check_comparison.py" quick "$(ls -d "$work"/quick/xlagui-*)"

# Issue 39: the JAX arm on the plain install (no JAX): one line with its install command, exit 2.
refused_without_jax() {
  local out rc=0
  out=$(xlagui compare --demo --quick --arms jax --out "$work/jax" 2>&1) || rc=$?
  [ "$rc" = 2 ] && grep -q "pip install 'xlagui\[jax\]'" <<<"$out" \
    && ! grep -q Traceback <<<"$out" && [ ! -e "$work/jax" ] \
    || { echo "ci: --arms jax without JAX exited $rc: $out"; return 1; }
}
step "xlagui compare --arms jax without JAX (exit 2)" refused_without_jax

mkdir "$work/train" && cd "$work/train"
step "xlagui compare --demo --epochs 1 --image-size 48 --no-explain --budget 10" \
  xlagui compare --demo --epochs 1 --image-size 48 --no-explain --budget 10 --out "$work/train/out"
step "check train" python "$ROOT/.ci/check_comparison.py" train "$work/train/out"

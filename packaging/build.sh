#!/usr/bin/env bash
# Build the one-folder bundle dist/xlagui/ with PyInstaller, then smoke-test it from outside the
# source tree: --version, and a one-epoch headless comparison on the demo set, which runs both
# training workers through the bundle's own executable.
#
#   packaging/build.sh              build and test
#   packaging/build.sh --no-test    build only
#   XLAGUI_DEBUG_CONSOLE=1 packaging/build.sh    Windows: give the app a console for tracebacks
#
# Run it from a Python environment that has xlagui's dependencies (pip install -e . or the
# wheel). Takes several minutes and a few GB of disk (TensorFlow); see packaging/README.md.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python}

"$PYTHON" -m pip install --upgrade 'pyinstaller>=6.10'

start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean \
    --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" \
    packaging/xlagui.spec
end=$(date +%s)
echo "build: $((end - start)) s, bundle: $(du -sh "$ROOT/dist/xlagui" | cut -f1)"

if [[ "${1:-}" == "--no-test" ]]; then
    exit 0
fi

# On Windows `xlagui` is windowed and prints nothing; `xlagui-cli` is the console twin.
case "$(uname -s)" in
    MINGW* | MSYS* | CYGWIN*) EXE="$ROOT/dist/xlagui/xlagui-cli.exe" ;;
    *) EXE="$ROOT/dist/xlagui/xlagui" ;;
esac

# Outside the source tree, so nothing can be imported from the checkout by accident.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "== $EXE --version"
"$EXE" --version | tee version.txt
grep -q "^xlagui [0-9]" version.txt

echo "== $EXE compare --demo --epochs 1 --image-size 48"
start=$(date +%s)
# Exits 1 when a run failed (set -e stops here then); the check adds that both training runs
# wrote their TensorBoard scalars, an optional export that only leaves a note when it fails.
QT_QPA_PLATFORM=offscreen "$EXE" compare --demo --epochs 1 --image-size 48 --out "$work/out"
end=$(date +%s)
"$PYTHON" "$ROOT/.ci/check_comparison.py" train "$work/out"
echo "smoke test passed in $((end - start)) s"

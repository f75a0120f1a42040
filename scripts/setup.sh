# Sourced by ./mutate and ./run-tests: create .venv on first use (or when pyproject.toml
# changes) with the CPU build of torch 2.13.0 and this package, editable, with test extras;
# with --ray among the arguments, also the ray extra.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MUTATOR_VENV:-$ROOT/.venv}"
STAMP="$VENV/.mutator-installed"
PYTHON="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setting up $VENV (first run: installs torch 2.13.0, CPU build)..." >&2
    "$PYTHON" -m venv "$VENV"
fi
if [ ! -f "$STAMP" ] || [ "$ROOT/pyproject.toml" -nt "$STAMP" ]; then
    # torch first and pinned: an unpinned torch would pull a multi-GB CUDA build
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[test]"
    touch "$STAMP"
fi
for arg in "$@"; do
    case "$arg" in
        --ray|--ray=*)
            if ! "$VENV/bin/python" -c "import ray" 2>/dev/null; then
                echo "installing Ray for --ray (pip install 'mutator[ray]')..." >&2
                "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[ray]"
            fi ;;
    esac
done

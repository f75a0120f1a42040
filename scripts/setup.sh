# Sourced by ./mutate and ./run-tests: create a venv on first use (or when pyproject.toml or
# the torch asked for changes) with torch and this package, editable, with test extras; with
# --ray among the arguments, also the ray extra.
#
# The torch under test: DEFAULT_TORCH below, in .venv/; another release by name,
# MUTATE_TORCH=2.13.0 ./mutate ..., in a venv of its own beside it (.venv-torch2.13.0/).
# MUTATOR_VENV=DIR uses (or creates) that venv instead. A nightly or a source build: install
# this package into that environment (pip install -e .) or give its python to --python.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEFAULT_TORCH=2.14.1
TORCH_VERSION="${MUTATE_TORCH:-$DEFAULT_TORCH}"
if [ -n "${MUTATOR_VENV:-}" ]; then
    VENV="$MUTATOR_VENV"
elif [ "$TORCH_VERSION" = "$DEFAULT_TORCH" ]; then
    VENV="$ROOT/.venv"
else
    VENV="$ROOT/.venv-torch$TORCH_VERSION"
fi
STAMP="$VENV/.mutator-installed"
PYTHON="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setting up $VENV (first run: installs torch $TORCH_VERSION)..." >&2
    "$PYTHON" -m venv "$VENV"
fi
# The stamp holds the torch it was made for: a venv made for another release is brought to this one.
if [ ! -f "$STAMP" ] || [ "$ROOT/pyproject.toml" -nt "$STAMP" ] || [ "$(cat "$STAMP")" != "torch==$TORCH_VERSION" ]; then
    # torch first and pinned: an unpinned torch would pull a multi-GB build from the registry
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$TORCH_VERSION"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[test]"
    echo "torch==$TORCH_VERSION" > "$STAMP"
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

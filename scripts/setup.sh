# Sourced by ./mutate and ./run-tests: make a venv on first use with torch and this package
# (editable, with test extras), and install the package again when pyproject.toml changes; with
# --ray among the arguments, also the ray extra. Sets VENV (and ROOT) for its caller.
#
# Which venv, torch and Python:
#   .venv/                the default: torch's newest release the package index serves to this
#                         Python (pip index versions torch), found when the venv is made and kept
#                         in its stamp (.venv/.mutator-installed): an existing .venv keeps its torch
#   MUTATE_TORCH=2.13.0   that release instead, in a venv of its own: .venv-torch2.13.0/
#   MUTATE_PYTHON=3.13    on that Python (pyenv's ~/.pyenv/versions/3.13*, else python3.13 on PATH),
#                         or on the interpreter a path names: .venv-py3.13/, .venv-torch2.13.0-py3.13/
#   MUTATOR_VENV=DIR      that venv: a torch already there is kept (only this package is installed
#                         into it), else the default torch is installed
# A nightly or a source build: install this package into that environment (pip install -e .) or
# give its python to --python.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

_setup_fail() {
    echo "error: $*" >&2
    exit 2
}

_python_version() {  # "3.13.0" of an interpreter
    "$1" -c 'import platform; print(platform.python_version())'
}

# The interpreter a new venv is made with: MUTATE_PYTHON's, else $PYTHON or python3.
VENV_SUFFIX=""
BASE_PYTHON="${PYTHON:-python3}"
if [ -n "${MUTATE_PYTHON:-}" ]; then
    case "$MUTATE_PYTHON" in
        */*)
            BASE_PYTHON="$MUTATE_PYTHON"
            [ -x "$BASE_PYTHON" ] || _setup_fail "MUTATE_PYTHON=$MUTATE_PYTHON: no such interpreter; give a" \
                "version such as 3.13, or the path of a python" ;;
        3.[0-9] | 3.[0-9][0-9])
            BASE_PYTHON="$(ls -d "${HOME:-}/.pyenv/versions/$MUTATE_PYTHON"{,.[0-9]*}/bin/"python$MUTATE_PYTHON" \
                2>/dev/null | sort -V | tail -n 1 || true)"  # pyenv's newest patch release first
            [ -n "$BASE_PYTHON" ] || BASE_PYTHON="$(command -v "python$MUTATE_PYTHON" || true)"
            [ -n "$BASE_PYTHON" ] || _setup_fail "MUTATE_PYTHON=$MUTATE_PYTHON: no Python $MUTATE_PYTHON here" \
                "(looked for ~/.pyenv/versions/$MUTATE_PYTHON*/bin/python$MUTATE_PYTHON and python$MUTATE_PYTHON" \
                "on PATH); install it (pyenv install $MUTATE_PYTHON, or your system's python$MUTATE_PYTHON" \
                "package), or give the path of one: MUTATE_PYTHON=/path/to/python$MUTATE_PYTHON" ;;
        *)
            _setup_fail "MUTATE_PYTHON=$MUTATE_PYTHON: give a version such as 3.13, or the path of a python" ;;
    esac
    version="$(_python_version "$BASE_PYTHON" 2>/dev/null)" || _setup_fail "MUTATE_PYTHON=$MUTATE_PYTHON:" \
        "$BASE_PYTHON does not run as a Python"
    minor="${version#*.}"
    minor="${minor%%.*}"
    [ "${version%%.*}" = 3 ] && [ "${minor%%[!0-9]*}" -ge 10 ] || _setup_fail "MUTATE_PYTHON=$MUTATE_PYTHON:" \
        "$BASE_PYTHON is Python $version; mutator needs 3.10 or newer"
    VENV_SUFFIX="-py${version%%.*}.${minor%%[!0-9]*}"
fi

if [ -n "${MUTATOR_VENV:-}" ]; then
    VENV="$MUTATOR_VENV"
elif [ -n "${MUTATE_TORCH:-}" ]; then
    VENV="$ROOT/.venv-torch$MUTATE_TORCH$VENV_SUFFIX"
else
    VENV="$ROOT/.venv$VENV_SUFFIX"
fi
STAMP="$VENV/.mutator-installed"  # "torch==2.15.0": the torch the venv was set up with

_stamp_torch() {
    sed -n 's/^torch==//p' "$STAMP" 2>/dev/null | head -n 1 || true  # none: not set up yet
}

_stamp_fresh() {  # set up, and not before pyproject.toml last changed
    [ -f "$STAMP" ] && [ ! "$ROOT/pyproject.toml" -nt "$STAMP" ]
}

_installed_torch() {  # the torch the venv holds, by its metadata: prints it, or nothing; exits 3 for a torch
    # that imports without metadata (pip would install another over it)
    "$VENV/bin/python" -c 'import importlib.metadata as m, importlib.util as u, sys
try:
    print(m.version("torch"))
except m.PackageNotFoundError:
    sys.exit(3 if u.find_spec("torch") else 0)'
}

_newest_torch() {  # TORCH_VERSION: the newest torch release the package index serves to the venv's Python
    local said
    said="$("$VENV/bin/python" -m pip index versions torch --disable-pip-version-check 2>&1)" || true
    TORCH_VERSION="$(printf '%s\n' "$said" | sed -n 's/^torch (\(.*\))$/\1/p' | head -n 1)"
    [ -n "$TORCH_VERSION" ] || _setup_fail "cannot find torch's newest release for $VENV (pip index versions" \
        "torch: $(printf '%s\n' "$said" | grep -v '^WARNING' | tail -n 1)); reach the package index, or name" \
        "a release: MUTATE_TORCH=2.15.0 $0 ..."
}

_install() {  # torch==$1 and this package in one resolution: pip refuses rather than changes that torch
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$1" -e "$ROOT[test]" ||
        _setup_fail "could not install torch $1 and mutator into $VENV (pip's message above)"
    echo "torch==$1" > "$STAMP"
}

if [ -n "${MUTATOR_VENV:-}" ]; then
    # A venv the user names is never changed beyond installing this package into it.
    [ -x "$VENV/bin/python" ] || "$BASE_PYTHON" -m venv "$VENV"
    if [ -n "$VENV_SUFFIX" ]; then
        have="$(_python_version "$VENV/bin/python")"
        [ "-py${have%.*}" = "$VENV_SUFFIX" ] || _setup_fail "MUTATOR_VENV=$VENV runs Python $have, MUTATE_PYTHON" \
            "asks for ${VENV_SUFFIX#-py}: a venv you name is not changed; drop one of the two"
    fi
    if ! _stamp_fresh; then
        status=0
        have="$(_installed_torch)" || status=$?
        [ "$status" -ne 3 ] || _setup_fail "MUTATOR_VENV=$VENV imports a torch pip has no record of (a source" \
            "build?), and pip would install another over it: install mutator there yourself" \
            "($VENV/bin/python -m pip install --no-deps -e $ROOT, then its other dependencies, pyproject.toml)"
        [ "$status" -eq 0 ] || exit "$status"
        if [ -n "$have" ]; then
            if [ -n "${MUTATE_TORCH:-}" ] && [ "${have%%+*}" != "${MUTATE_TORCH%%+*}" ]; then
                _setup_fail "MUTATOR_VENV=$VENV has torch $have, MUTATE_TORCH asks for $MUTATE_TORCH: a venv you" \
                    "name is never changed beyond installing mutator into it; drop one of the two"
            fi
            echo "installing mutator into $VENV, which keeps its torch $have (a venv you name is never changed" \
                "beyond that)" >&2
            TORCH_VERSION="$have"
        else
            why="MUTATE_TORCH"
            TORCH_VERSION="${MUTATE_TORCH:-}"
            [ -n "$TORCH_VERSION" ] || { _newest_torch; why="the newest release the package index serves"; }
            echo "setting up $VENV (it has no torch): installs torch $TORCH_VERSION ($why) on Python" \
                "$(_python_version "$VENV/bin/python"), and mutator..." >&2
        fi
        _install "$TORCH_VERSION"
    fi
else
    first=""
    if [ ! -x "$VENV/bin/python" ]; then
        "$BASE_PYTHON" -m venv "$VENV"
        first=" (the first time: a few minutes)"
    fi
    if [ -n "${MUTATE_TORCH:-}" ]; then
        TORCH_VERSION="$MUTATE_TORCH"
        why="MUTATE_TORCH"
    else
        TORCH_VERSION="$(_stamp_torch)"  # a venv made before keeps its torch: the index is asked only here
        why="the venv's, as set up before"
        if [ -z "$TORCH_VERSION" ]; then
            _newest_torch
            why="the newest release the package index serves"
        fi
    fi
    if ! _stamp_fresh || [ "$(_stamp_torch)" != "$TORCH_VERSION" ]; then
        echo "setting up ${VENV#"$ROOT"/}/: torch $TORCH_VERSION ($why) on Python" \
            "$(_python_version "$VENV/bin/python"), and mutator$first..." >&2
        _install "$TORCH_VERSION"
    fi
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

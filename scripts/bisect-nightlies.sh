#!/usr/bin/env bash
# Find the PyTorch nightly that changed a reproducer's outcome: install CPU nightlies into a
# scratch venv and binary-search by date on the reproducer's exit status (0: good, the bug
# is absent; anything else: bad; 125: this nightly cannot tell, skip it, as in git bisect run).
#
#   scripts/bisect-nightlies.sh REPRO.py --good YYYYMMDD --bad YYYYMMDD --nightly-versions 2.14.0,2.15.0
#                               [--venv DIR]
#
# --good and --bad are days whose nightlies exit 0 and non-zero (either may be the later: a
# search for a fix has the good day after the bad one). --nightly-versions: the release
# numbers the nightlies in the range carry (after release X.Y they are X.(Y+1).0.devYYYYMMDD
# until the next branch cut); mutate report's Versions section gives all three. Both ends
# are checked first: a release's code is its branch cut, weeks before its release date.
#
# Environment:
#   BISECT_INSTALL   command run as `$BISECT_INSTALL PYTHON DAY VERSIONS` to install the
#                    nightly of DAY into the venv of PYTHON; exit 0 when installed, 3 when
#                    there is none that day (skipped), anything else stops the bisect.
#                    Default: pip install --pre torch==<version>.dev<DAY> from the index below.
#   BISECT_INDEX     default https://download.pytorch.org/whl/nightly/cpu
#   BISECT_PYTHON    the interpreter that makes the scratch venv (default python3)
#   BISECT_TIMEOUT   seconds per run of the reproducer (default 900); a timeout counts as bad
set -euo pipefail

usage() {
    echo "usage: $0 REPRO.py --good YYYYMMDD --bad YYYYMMDD --nightly-versions X.Y.0[,X.Z.0] [--venv DIR]" >&2
    exit 2
}

REPRO="" GOOD="" BAD="" VERSIONS="" VENV=""
while [ $# -gt 0 ]; do
    case "$1" in
        --good) GOOD="${2:-}"; shift 2 ;;
        --bad) BAD="${2:-}"; shift 2 ;;
        --nightly-versions) VERSIONS="${2:-}"; shift 2 ;;
        --venv) VENV="${2:-}"; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) [ -z "$REPRO" ] || usage; REPRO="$1"; shift ;;
    esac
done
[ -n "$REPRO" ] && [ -n "$GOOD" ] && [ -n "$BAD" ] || usage
[ -f "$REPRO" ] || { echo "error: $REPRO: no such reproducer; give the finding's repro.py" >&2; exit 2; }
[ -n "$VERSIONS" ] || [ -n "${BISECT_INSTALL:-}" ] || {
    echo "error: --nightly-versions is needed to name the nightlies (2.15.0 for torch==2.15.0.devYYYYMMDD)" >&2
    exit 2
}
for day in "$GOOD" "$BAD"; do
    [[ "$day" =~ ^[0-9]{8}$ ]] && date -u -d "$day" +%s >/dev/null 2>&1 || {
        echo "error: $day is not a day as YYYYMMDD (20260930)" >&2; exit 2; }
done
REPRO="$(cd "$(dirname "$REPRO")" && pwd)/$(basename "$REPRO")"
INDEX="${BISECT_INDEX:-https://download.pytorch.org/whl/nightly/cpu}"
TIMEOUT="${BISECT_TIMEOUT:-900}"
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/bisect-nightlies.XXXXXX")"
VENV="${VENV:-$SCRATCH/venv}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "making the scratch venv $VENV..." >&2
    "${BISECT_PYTHON:-python3}" -m venv "$VENV"
fi
PY="$(cd "$VENV" && pwd)/bin/python"  # the reproducer runs in the scratch directory

install_nightly() {  # PYTHON DAY VERSIONS: the default installer
    local version
    for version in ${3//,/ }; do
        if "$1" -m pip install --quiet --disable-pip-version-check --pre "torch==$version.dev$2" \
                --index-url "$INDEX" >/dev/null 2>&1; then
            return 0
        fi
    done
    return 3
}

to_number() { echo $(( $(date -u -d "$1" +%s) / 86400 )); }
to_day() { date -u -d "@$(( $1 * 86400 ))" +%Y%m%d; }

declare -A SKIPPED=() BUILT=()
RESULT=""
# The outcome on day number $1 into RESULT: good, bad or skip; what it installed into BUILT.
outcome() {
    local day status
    day="$(to_day "$1")"
    echo "nightly $day: installing..." >&2
    status=0
    if [ -n "${BISECT_INSTALL:-}" ]; then
        $BISECT_INSTALL "$PY" "$day" "$VERSIONS" || status=$?
    else
        install_nightly "$PY" "$day" "$VERSIONS" || status=$?
    fi
    if [ "$status" -eq 3 ]; then
        echo "nightly $day: none published; skipped" >&2
        RESULT=skip; return
    elif [ "$status" -ne 0 ]; then
        echo "error: installing the nightly of $day failed (exit $status); fix the installer and run again" >&2
        exit 1
    fi
    BUILT[$1]="$("$PY" -c 'import torch; print(torch.__version__, "git", getattr(torch.version, "git_version", "?"))')"
    status=0
    (cd "$SCRATCH" && timeout "$TIMEOUT" "$PY" "$REPRO" >"$SCRATCH/last.log" 2>&1) || status=$?
    echo "nightly $day (${BUILT[$1]}): the reproducer exits $status" >&2
    if [ "$status" -eq 0 ]; then RESULT=good; elif [ "$status" -eq 125 ]; then RESULT=skip; else RESULT=bad; fi
}

good=$(to_number "$GOOD")
bad=$(to_number "$BAD")
[ "$good" -ne "$bad" ] || { echo "error: --good and --bad are the same day" >&2; exit 2; }
for end in good bad; do
    number=${!end}
    outcome "$number"
    if [ "$RESULT" != "$end" ]; then
        echo "error: the nightly of $(to_day "$number") is $RESULT, not $end: widen the range (a release's code is" \
             "its branch cut, weeks before its date) or check the reproducer ($SCRATCH/last.log)" >&2
        exit 2
    fi
done

# Invariant: the reproducer passes on day $good and fails on day $bad; no nightly strictly
# between them that is not SKIPPED has been tried.
while :; do
    middle=$(( (good + bad) / 2 ))
    candidate=""
    for offset in $(seq 0 $(( good > bad ? good - bad : bad - good ))); do
        for day in $(( middle + offset )) $(( middle - offset )); do
            low=$(( good < bad ? good : bad )); high=$(( good < bad ? bad : good ))
            if [ "$day" -gt "$low" ] && [ "$day" -lt "$high" ] && [ -z "${SKIPPED[$day]:-}" ]; then
                candidate=$day; break 2
            fi
        done
    done
    [ -n "$candidate" ] || break
    outcome "$candidate"
    case "$RESULT" in
        good) good=$candidate ;;
        bad) bad=$candidate ;;
        skip) SKIPPED[$candidate]=1 ;;
    esac
done

skipped=""
low=$(( good < bad ? good : bad )); high=$(( good < bad ? bad : good ))
for day in "${!SKIPPED[@]}"; do
    if [ "$day" -gt "$low" ] && [ "$day" -lt "$high" ]; then skipped="$skipped $(to_day "$day")"; fi
done
echo "good: nightly $(to_day "$good") (${BUILT[$good]:-}): the reproducer exits 0"
echo "bad:  nightly $(to_day "$bad") (${BUILT[$bad]:-}): the reproducer fails"
[ -z "$skipped" ] || echo "no nightly to tell between them on:$skipped"
if [ "$good" -lt "$bad" ]; then
    echo "the change that broke it landed after nightly $(to_day "$good") and by $(to_day "$bad"): the commits between their git hashes"
else
    echo "the fix landed after nightly $(to_day "$bad") and by $(to_day "$good"): the commits between their git hashes"
fi

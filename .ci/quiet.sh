# Sourced by .ci/run and fuzz/run.sh.
# quiet CMD...: runs CMD with its output held back, printed if it fails (a
# build error must show in the log, not end the run silently under set -e).
quiet() {
    local out
    out=$(mktemp)
    if ! "$@" >"$out" 2>&1; then
        cat "$out"
        rm -f "$out"
        echo "failed: $*" >&2
        return 1
    fi
    rm -f "$out"
}

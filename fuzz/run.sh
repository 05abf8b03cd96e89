#!/usr/bin/env bash
# Runs one libFuzzer target for a given time on its corpus:
#   fuzz/run.sh TARGET SECONDS [BUILD_DIR [LIBFUZZER_FLAG...]]
# TARGET: graph_parse, npy, safetensors, idx or conform_case. SECONDS 0 only
# builds the target (so that runs in parallel find it built). Builds BUILD_DIR
# (default build-fuzz, clang with ASan + UBSan) if needed. New inputs found go
# to BUILD_DIR/fuzz-corpus/TARGET (the seeds in fuzz/corpus/TARGET stay as
# they are); a crashing input is written to BUILD_DIR/fuzz-findings/ and the
# script fails: add it to fuzz/regressions/TARGET/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: fuzz/run.sh TARGET SECONDS [BUILD_DIR]}
seconds=${2:?usage: fuzz/run.sh TARGET SECONDS [BUILD_DIR]}
build=${3:-build-fuzz}
extra=("${@:4}")
[ -d "fuzz/corpus/$target" ] || { echo "fuzz/run.sh: no target '$target'" >&2; exit 2; }
# quiet: the build's output only if it fails, with the failing command (a
# silent exit under set -e left CI logs ending with nothing, as in .ci/run)
source .ci/quiet.sh
if [ ! -f "$build/build.ninja" ]; then
    CC=clang quiet meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dtests=disabled -Dbuildtype=debugoptimized -Dc_args=-g1 # line tables (file:line in reports), not full -g: a faster build
fi
quiet meson compile -C "$build" "fuzz/fuzz_$target"
[ "$seconds" != 0 ] || exit 0
work="$build/fuzz-corpus/$target"
findings="$build/fuzz-findings"
mkdir -p "$work" "$findings"
dict=()
[ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
log="$build/fuzz-$target.log"
status=0
"$build/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=3072 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/$target-" "${dict[@]}" "${extra[@]}" "$work" "fuzz/corpus/$target" \
    >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    grep -Ev '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED)' "$log" | tail -n 150
    echo "fuzz/run.sh: $target failed (exit $status); full log in $log" >&2
else
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$log" || true
    echo "$target: $(ls "$work" | wc -l) inputs in $work"
fi
exit "$status"

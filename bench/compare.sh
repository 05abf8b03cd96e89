#!/bin/sh
# tjit against PyTorch, side by side, into bench/RESULTS.md and bench/results.svg.
#
#   bench/compare.sh [NAME...]        (default: every model and micro-benchmark)
#
# Environment: TJIT (default build/tools/tjit), THREADS (default 1,2), RUNS
# (default 20), OUT (the JSON files, default bench/results), RESULTS (default
# bench/RESULTS.md), SVG (default bench/results.svg) and NOTE (a paragraph for
# the RESULTS.md section: the conditions of the run).
#
# For each thread count and workload, `tjit bench NAME` (with its defaults and
# with OMP_WAIT_POLICY=passive) and then `bench/torch_ref.py NAME` (PyTorch's
# defaults and OMP_WAIT_POLICY=passive) run back to back, so that each tjit/PyTorch ratio
# is taken seconds apart on this machine whose speed drifts by 1.5-2x over
# minutes; 1-thread runs of both are pinned to one CPU (PIN_CPU, default 0)
# because this VM's two vCPUs differ in speed (vCPU 1 ran 15-45% slower in
# 2026-11 measurements: dispatch 74 against 39 ns); bench/merge.py then
# joins all the JSON files. PyTorch first checks
# it computes what tjit computes, from the weights and batches that
# `tjit bench --export` writes.
set -eu
cd "$(dirname "$0")/.."
tjit=${TJIT:-build/tools/tjit}
threads=${THREADS:-1,2}
runs=${RUNS:-20}
out=${OUT:-bench/results}
results=${RESULTS:-bench/RESULTS.md}
svg=${SVG:-bench/results.svg}
names=${*:-mlp cnn gpt block768 mlp_b1 dispatch copy gelu softmax layer_norm mm sdpa trace}
python=/usr/bin/python3

ref=$(mktemp -d /tmp/tjit-ref.XXXXXX)
trap 'rm -rf "$ref"' EXIT
mkdir -p "$out"
# Only the workloads being run are replaced: the others keep their last figures.
for name in $names; do rm -f "$out"/tjit-"$name"-*.json "$out"/torch-"$name"-*.json; done
"$tjit" bench --export "$ref"
for t in $(echo "$threads" | tr , ' '); do
    pin=""
    [ "$t" != 1 ] || pin="taskset -c ${PIN_CPU:-0}"
    for name in $names; do
        echo "== $name, $t thread(s); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
        $pin "$tjit" bench "$name" --threads "$t" --runs "$runs" --quiet --json "$out/tjit-$name-$t.json"
        # tjit's OpenMP threads with the same passive policy as PyTorch's passive runs
        OMP_WAIT_POLICY=passive $pin "$tjit" bench "$name" --threads "$t" --runs "$runs" --quiet \
            --json "$out/tjit-$name-$t-passive.json" >/dev/null
        $pin $python bench/torch_ref.py "$name" --threads "$t" --runs "$runs" --ref "$ref" \
            --json "$out/torch-$name-$t.json"
    done
done
$python bench/merge.py "$out"/tjit-*.json "$out"/torch-*.json --results "$results" --svg "$svg" --note "${NOTE:-}" \
    --command "meson setup build && meson compile -C build" \
    --command "THREADS=$threads RUNS=$runs bench/compare.sh $*" \
    --command "# which runs, for each thread count T and workload NAME, back to back (T = 1: each pinned, taskset -c ${PIN_CPU:-0}):" \
    --command "$tjit bench --export REF" \
    --command "$tjit bench NAME --threads T --runs $runs --quiet --json $out/tjit-NAME-T.json" \
    --command "OMP_WAIT_POLICY=passive $tjit bench NAME --threads T --runs $runs --quiet --json $out/tjit-NAME-T-passive.json" \
    --command "$python bench/torch_ref.py NAME --threads T --runs $runs --ref REF --json $out/torch-NAME-T.json" \
    --command "$python bench/merge.py $out/tjit-*.json $out/torch-*.json --results $results --svg $svg"

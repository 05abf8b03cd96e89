#!/usr/bin/env bash
# The tjit command's error paths (issue 8): every subcommand answers --help
# with its usage on stdout and status 0; a bad option or value prints what was
# wrong and the usage on stderr and exits 2; a missing file or data set exits 1
# with a message naming it. Also a trace -> graph round trip, and `tjit
# conform` on $TJ_SHARED_DIR/conformance (meson sets it; default ../shared),
# and that fuzz/run.sh shows a failing build.
#   cli_test.sh TJIT
set -uo pipefail

tjit=$(realpath "${1:?usage: cli_test.sh TJIT}") # absolute: some checks run in other folders
work=$(mktemp -d "${TMPDIR:-/tmp}/tjit-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
shared=${TJ_SHARED_DIR:-../shared}
failures=0

# expect STATUS PATTERN STREAM ARGS...: runs `tjit ARGS...` and checks its exit
# status and that STREAM (out or err) matches the extended regex PATTERN.
# stdout goes to $work/out, or to $expect_stdout when set (/dev/full).
expect() {
    local want=$1 pattern=$2 stream=$3
    shift 3
    "$tjit" "$@" >"${expect_stdout:-$work/out}" 2>"$work/err" </dev/null
    local got=$?
    if [ "$got" -ne "$want" ] || ! grep -Eq -- "$pattern" "$work/$stream"; then
        echo "FAIL: tjit $* -> status $got (want $want), $stream should match /$pattern/" >&2
        sed 's/^/  stdout: /' "$work/out" | head -n 5 >&2
        sed 's/^/  stderr: /' "$work/err" | head -n 5 >&2
        failures=$((failures + 1))
    fi
}

expect 2 '^usage: tjit <command>' err
expect 2 "unknown command 'nope'" err nope
expect 0 '^usage: tjit <command>' out --help
for cmd in conform ops train eval trace profile bench decomps graph run demo; do
    expect 0 "^usage: tjit $cmd" out "$cmd" --help
    expect 2 "usage: tjit $cmd" err "$cmd" --no-such-option
done
# getopt's own messages name the command as the others do (demo, which takes no option, words it so too)
for cmd in conform ops train eval trace profile bench decomps graph run demo; do
    expect 2 "^tjit $cmd: unrecognized option '--no-such-option'" err "$cmd" --no-such-option
done
expect 2 "^tjit demo: unexpected argument 'extra'" err demo extra
expect 2 "^tjit train: option '--epochs' requires an argument" err train mlp --epochs

expect 2 "unknown model 'rnn'" err train rnn
expect 2 "bad value 'fast' for --mode" err train mlp --mode fast
expect 2 "bad value 'bogus' for --mode \(eager, traced, decomposed or jit\)" err train mlp --mode bogus
expect 2 "bad value '0' for --epochs" err train mlp --epochs 0
expect 2 "bad value 'x' for --epochs" err train mlp --epochs x
expect 2 "bad value '-3' for --batch-size" err train mlp --batch-size -3
expect 2 "bad value '-1' for --threads" err train mlp --threads -1
# 0 is refused by every command (omitting --threads means all cores), as profile and bench do
expect 2 "bad value '0' for --threads \(a positive number of threads; omit for all cores\)" err train mlp --threads 0
expect 2 'usage: tjit train' err train mlp --threads 0
expect 2 "bad value 'x' for --seed" err train mlp --seed x
# numbers are digits, as bench --threads reads them: no plus or space strtol would skip
expect 2 "bad value '\\+5' for --epochs" err train mlp --epochs +5
expect 2 "bad value ' 5' for --epochs" err train mlp --epochs ' 5'
expect 2 "bad value '\\+1' for --seed" err train mlp --seed +1
expect 2 "bad value ' 2' for --runs" err profile mlp --runs ' 2'
expect 2 'gpt is not a Fashion-MNIST model \(mlp or cnn\)' err train gpt
expect 2 'usage: tjit train' err train mlp cnn
# a missing or extra operand is named, not only shown the usage
expect 2 "^tjit train: unexpected argument 'cnn'" err train mlp cnn
expect 2 '^tjit train: missing the model \(mlp or cnn\)' err train
expect 2 "^tjit eval: unexpected argument 'cnn'" err eval mlp cnn --load x
expect 2 "^tjit profile: unexpected argument 'extra'" err profile mlp extra
expect 2 '^tjit profile: missing the model' err profile
expect 2 "^tjit trace: unexpected argument 'extra'" err trace mlp extra
expect 2 '^tjit trace: missing the model' err trace
expect 2 "^tjit graph: unexpected argument 'b'" err graph a b
expect 2 '^tjit graph: missing the graph FILE' err graph
expect 2 "^tjit ops: unexpected argument 'extra'" err ops extra
expect 2 "^tjit demo: unexpected argument 'extra'" err demo extra
expect 1 'Fashion-MNIST not found in .*dataset-fashion-mnist' err train mlp --data "$work/no-such-dir"
expect 2 'usage: tjit eval' err eval mlp
expect 2 "bad value 'bogus' for --mode \(eager, traced, decomposed or jit\)" err eval mlp --mode bogus --load x
expect 1 "cannot open '$work/missing.safetensors'" err eval mlp --load "$work/missing.safetensors"
expect 2 "bad value 'xml' for --format \(text, dot or json\)" err trace gpt --format xml
# real mode runs the kernels on real example inputs (the default is fake)
expect 0 'aten.nll_loss_backward.default' out trace mlp --train --tracing-mode real
expect 0 'aten.native_layer_norm.default' out trace gpt --tracing-mode real
expect 2 "bad value 'bad' for --tracing-mode" err trace gpt --tracing-mode bad
expect 2 'usage: tjit trace' err trace gpt --tracing-mode bad
expect 2 "unknown model 'nope'" err trace nope
expect 2 "unknown operator 'aten::nope'" err trace mlp --decompose aten::gelu,aten::nope
expect 0 '^graph\(' out trace mlp --decompose aten::bmm
expect 2 "unknown benchmark 'nosuch'" err bench nosuch
# mm_cblas is a figure of mm's: naming it runs mm
expect 0 '^mm_cblas +1 ' out bench mm_cblas --runs 1 --threads 1 --quiet
expect 2 "bad value '0' for --threads \(a comma-separated list of distinct positive thread counts" err bench mlp --threads 0
expect 2 "bad value '1,0' for --threads" err bench mlp --threads 1,0
# an empty entry or a sign is refused too (a trailing comma used to be ignored)
expect 2 "bad value '1,' for --threads" err bench mlp --threads 1,
expect 2 "bad value '1,,2' for --threads" err bench mlp --threads 1,,2
expect 2 "bad value '\+1' for --threads" err bench mlp --threads +1
expect 2 "bad value '1,2,1' for --threads" err bench mlp --threads 1,2,1
expect 2 "bad value '0' for --runs" err bench mlp --runs 0
# a --json file that cannot be written is refused before the benchmark runs
expect 1 "cannot write '$work/no-dir/b\\.json': $work/no-dir: No such file or directory" err \
    bench mlp --runs 1 --json "$work/no-dir/b.json"
# ... as is one naming a directory or nothing
expect 1 "cannot write '$work': Is a directory" err bench mlp_b1 --runs 1 --threads 1 --json "$work"
expect 1 "cannot write '': an empty path" err bench mlp_b1 --runs 1 --threads 1 --json ''
# profile --denormals: the census table's total line
expect 0 "^total: [0-9]+ denormal of [0-9]+ float results" out profile mlp --runs 1 --threads 1 --denormals \
    --trace "$work/dn.json"
if [ -s "$work/err" ]; then echo "FAIL: tjit profile --denormals wrote to stderr: $(cat "$work/err")" >&2; failures=$((failures + 1)); fi
expect 0 "^trace written to" out profile mlp --runs 1 --threads 1 --trace "$work/plain.json"
if [ -s "$work/err" ]; then echo "FAIL: tjit profile wrote to stderr: $(cat "$work/err")" >&2; failures=$((failures + 1)); fi
# --flush-denormal: said in the header and in the JSON (this CPU has DAZ)
expect 0 "; denormals flushed to zero" out bench mlp_b1 --runs 1 --threads 1 --flush-denormal --json "$work/fd.json"
grep -q '"flush_denormal": true' "$work/fd.json" ||
    { echo "FAIL: bench --flush-denormal: the JSON lacks \"flush_denormal\": true" >&2; failures=$((failures + 1)); }
# and train's --save before the epochs (it trained, then lost the parameters)
expect 1 "^tjit train: cannot write '$work/no-dir/p\\.safetensors': $work/no-dir: No such file or directory" err \
    train mlp --save "$work/no-dir/p.safetensors" --data "$work/no-such-dir"
expect 1 "^tjit train: cannot write '$work': Is a directory" err train mlp --save "$work" --data "$work/no-such-dir"
# A save that fails after training (/dev/full passes that check) keeps the
# parameters: in tjit-train-MODEL-PID.safetensors in the current folder, else
# in $TMPDIR, named on stderr, exit 1. Trained on a Fashion-MNIST of 2 blank
# images a split (IDX: magic 0x0803 / 0x0801, then the sizes, big-endian).
mkdir "$work/fmnist" "$work/run" "$work/tmp"
for split in train t10k; do
    { printf '\0\0\10\3\0\0\0\2\0\0\0\34\0\0\0\34'; head -c 1568 /dev/zero; } | gzip >"$work/fmnist/$split-images-idx3-ubyte.gz"
    printf '\0\0\10\1\0\0\0\2\1\2' | gzip >"$work/fmnist/$split-labels-idx1-ubyte.gz"
done
expect 0 "^saved the checkpoint of epoch 1 to $work/p\.safetensors" out train mlp --threads 1 --data "$work/fmnist" --save "$work/p.safetensors"
expect 0 '^test accuracy: ' out eval mlp --data "$work/fmnist" --load "$work/p.safetensors"
# --resume: 1 epoch, then the 2nd from its checkpoint (its batch size and
# seed taken from it; --save over the same file), gives the bytes of 2 epochs
# in one run (parameters, momentum buffers, metadata) in every mode. Batches
# of 1: two momentum steps an epoch. jit mode's checkpoint has eager mode's bytes.
for mode in eager traced decomposed jit; do
    run=(train mlp --threads 1 --data "$work/fmnist" --mode $mode)
    expect 0 "^saved the checkpoint of epoch 2 to $work/whole\.st" out "${run[@]}" --batch-size 1 --epochs 2 --save "$work/whole.st"
    grep -q "^saved the checkpoint of epoch 1 to $work/whole\.st" "$work/out" ||
        { echo "FAIL: tjit train --save saved no checkpoint after epoch 1" >&2; failures=$((failures + 1)); }
    expect 0 "^saved the checkpoint of epoch 1 to" out "${run[@]}" --batch-size 1 --epochs 1 --save "$work/part.st"
    expect 0 "^resuming '$work/part\.st' at epoch 2 of 2" out "${run[@]}" --epochs 2 --resume "$work/part.st" --save "$work/part.st"
    grep -q '^epoch 1' "$work/out" && { echo "FAIL: tjit train --resume ran epoch 1 again" >&2; failures=$((failures + 1)); }
    cmp -s "$work/whole.st" "$work/part.st" ||
        { echo "FAIL: $mode: 1 epoch + --resume differs from 2 epochs in one run" >&2; failures=$((failures + 1)); }
    [ $mode = eager ] && cp "$work/whole.st" "$work/eager.st"
done
cmp -s "$work/whole.st" "$work/eager.st" ||
    { echo "FAIL: jit mode's 2 epochs differ from eager mode's" >&2; failures=$((failures + 1)); }
expect 0 '^test accuracy: ' out eval mlp --mode jit --data "$work/fmnist" --load "$work/whole.st"
expect 0 '^test accuracy: ' out eval mlp --data "$work/fmnist" --load "$work/whole.st"
# a finished run: nothing to train, exit 0 (a re-run after a kill is safe)
expect 0 "^'$work/whole\.st' has 2 epochs done, --epochs 2: nothing to train" out \
    train mlp --threads 1 --data "$work/fmnist" --resume "$work/whole.st" --epochs 2 --save "$work/whole.st"
cmp -s "$work/whole.st" "$work/part.st" || { echo "FAIL: a run with nothing to train changed its checkpoint" >&2; failures=$((failures + 1)); }
# the most epochs a checkpoint may hold (2^31 - 1): nothing to train either
# (epochs done + 1 overflowed, and it trained epoch -2147483648 on)
len=$(od -An -tu8 -N8 "$work/part.st" | tr -d ' ')
header=$(head -c $((8 + len)) "$work/part.st" | tail -c "$len")
header=${header/'"epoch":"2"'/'"epoch":"2147483647"'}
n=${#header}
{
    printf "$(printf '\\%03o' $((n & 255)) $((n >> 8 & 255)) $((n >> 16 & 255)) $((n >> 24 & 255)) 0 0 0 0)"
    printf '%s' "$header"
    tail -c +$((9 + len)) "$work/part.st"
} >"$work/max.st"
timeout 60 "$tjit" train mlp --threads 1 --data "$work/fmnist" --resume "$work/max.st" --epochs 3 >"$work/out" 2>"$work/err"
if [ $? -ne 0 ] || ! grep -q "^'$work/max\.st' has 2147483647 epochs done, --epochs 3: nothing to train" "$work/out" ||
    grep -q '^epoch' "$work/out"; then
    echo "FAIL: a checkpoint of 2147483647 epochs trained or failed" >&2
    sed 's/^/  /' "$work/out" "$work/err" | head -n 5 >&2
    failures=$((failures + 1))
fi
# another batch size than the checkpoint's: used, with a warning
expect 0 "warning: --batch-size 2, the checkpoint's is 1" err \
    train mlp --threads 1 --data "$work/fmnist" --resume "$work/part.st" --epochs 3 --batch-size 2
# refused before training, nothing written: another model's checkpoint, no file, a damaged file
expect 1 "^tjit train: --resume: cnn: '$work/part\.st' is a checkpoint of mlp, not cnn" err \
    train cnn --threads 1 --data "$work/fmnist" --resume "$work/part.st" --epochs 3 --save "$work/never.st"
expect 1 "^tjit train: --resume: tj_safetensors_load: cannot open '$work/none\.st'" err \
    train mlp --data "$work/fmnist" --resume "$work/none.st" --save "$work/never.st"
head -c 100 "$work/part.st" >"$work/cut.st"
expect 1 "^tjit train: --resume: tj_safetensors_load: '$work/cut\.st': header length [0-9]+ runs past the end" err \
    train mlp --data "$work/fmnist" --resume "$work/cut.st" --save "$work/never.st"
[ -e "$work/never.st" ] && { echo "FAIL: a refused --resume wrote its --save file" >&2; failures=$((failures + 1)); }
[ -s "$work/out" ] && { echo "FAIL: a refused --resume trained" >&2; failures=$((failures + 1)); }
# a parameter file without optimiser state (an older --save): a warm start
"$tjit" bench mlp_b1 --runs 1 --threads 1 --quiet --export "$work/export" >/dev/null 2>&1 ||
    { echo "FAIL: tjit bench --export" >&2; failures=$((failures + 1)); }
# --export writes the named models' files only (mlp_b1 reads mlp's), not every model's
[ "$(grep -o '"[a-z0-9_]*": {"params"' "$work/export/reference.json" | tr '\n' ' ')" = '"mlp": {"params" ' ] && [ ! -e "$work/export/gpt.safetensors" ] ||
    { echo "FAIL: tjit bench mlp_b1 --export wrote other models than mlp" >&2; failures=$((failures + 1)); }
expect 0 "warning: '$work/export/mlp\.safetensors' holds parameters only \(no optimiser state, no epoch count\): training from them with zero momentum buffers, from epoch 1" \
    err train mlp --threads 1 --data "$work/fmnist" --resume "$work/export/mlp.safetensors"
grep -q '^epoch 1: test accuracy' "$work/out" || { echo "FAIL: a warm start did not train epoch 1" >&2; failures=$((failures + 1)); }
here=$PWD # relative paths below ($shared, $0) are taken from here
cd "$work/run" || exit 1
expect 1 "^tjit train: the checkpoint \(trained parameters and optimiser state\) is saved to '\./tjit-train-mlp-[0-9]+\.safetensors' instead" err \
    train mlp --threads 1 --data "$work/fmnist" --save /dev/full
grep -q "^tjit train: tj_safetensors_save: cannot write '/dev/full': No space left on device" "$work/err" ||
    { echo "FAIL: tjit train --save /dev/full did not say why the save failed" >&2; failures=$((failures + 1)); }
grep -q '^test accuracy: ' "$work/out" || { echo "FAIL: tjit train with a failed save printed no accuracy" >&2; failures=$((failures + 1)); }
expect 0 '^test accuracy: ' out eval mlp --data "$work/fmnist" --load "$(ls "$work"/run/tjit-train-mlp-*.safetensors)"
# a failed save after an epoch before the last: a warning, training goes on
# (and the last one is rescued, in a file of its own)
rm "$work"/run/tjit-train-mlp-*.safetensors
expect 1 "^tjit train: warning: the checkpoint of epoch 1 is not saved \(tj_safetensors_save: cannot write '/dev/full'" err \
    train mlp --threads 1 --data "$work/fmnist" --epochs 2 --save /dev/full
grep -q '^epoch 2: test accuracy' "$work/out" || { echo "FAIL: a failed save stopped the training" >&2; failures=$((failures + 1)); }
expect 0 '^test accuracy: ' out eval mlp --data "$work/fmnist" --load "$(ls "$work"/run/tjit-train-mlp-*.safetensors)"
# ... and in $TMPDIR when the current folder cannot take it (removed meanwhile)
mkdir "$work/gone" && cd "$work/gone" && rmdir "$work/gone"
TMPDIR="$work/tmp" expect 1 "^tjit train: the checkpoint \(trained parameters and optimiser state\) is saved to '$work/tmp/tjit-train-mlp-[0-9]+\.safetensors' instead" \
    err train mlp --threads 1 --data "$work/fmnist" --save /dev/full
cd "$here" || exit 1
# and profile's --trace before the runs (it printed the table, then failed on the file)
expect 1 "^tjit profile: cannot write '': an empty path" err profile mlp --runs 1 --threads 1 --trace ''
if [ -s "$work/out" ]; then echo "FAIL: tjit profile ran before refusing its --trace path" >&2; failures=$((failures + 1)); fi
expect 1 "^tjit profile: cannot write '$work/no-dir/t\\.json': $work/no-dir: No such file or directory" err \
    profile mlp --runs 1 --threads 1 --trace "$work/no-dir/t.json"
# --native without a compiler: no times of the loops labelled as native code's
# (mlp: its decomposed training step has fused pointwise steps; mlp_b1's
# forward pass has none left once the bias adds run inside the products)
TJ_CC=/nonexistent/cc TJ_CACHE_DIR="$work/native-cache" \
    expect 1 "native code not built: .*cannot run the compiler '/nonexistent/cc'" err bench mlp --native --runs 1 --threads 1
TJ_CC=/nonexistent/cc TJ_CACHE_DIR="$work/native-cache" \
    expect 1 "^tjit profile: native code not built: .*cannot run the compiler '/nonexistent/cc'" err \
    profile mlp --train --decompose core --native --runs 1 --threads 1 --trace "$work/native.json"
# a count of one takes the singular (cnn's forward pass fuses one epilogue, mlp's none is plural)
expect 0 "^cnn forward \(batch 64\): [0-9]+ kernels \(1 epilogue and 0 attentions fused, 0 copies" out \
    profile cnn --runs 1 --threads 1 --trace "$work/cnn.json"
expect 2 'block768 has no training step' err profile block768 --train
expect 2 'usage: tjit profile' err profile
expect 2 "bad value 'foo' for --decompose \(core or none\)" err profile mlp --decompose foo
expect 2 "bad value '0' for --runs" err profile mlp --runs 0
expect 2 "bad value '0' for --batch" err profile mlp --batch 0
# a batch whose arena (85 GiB) the machine cannot give: refused before it is
# touched (breaker43: --batch 100000 made 21 GiB of 23, zeroed it and was
# OOM-killed); only where less than 80 GiB is available, else it would run
if [ "$(awk '/^MemAvailable:/ { print ($2 < 80 * 1024 * 1024) }' /proc/meminfo)" = 1 ]; then
    expect 1 "^tjit profile: gpt at batch 400000: tj_plan_context_new: not enough memory: the plan's arena needs [0-9]+ bytes \\([0-9.]+ GiB\\), more than 7/8 of the" \
        err profile gpt --batch 400000 --runs 1 --threads 1 --trace "$work/big.json"
fi
expect 0 '^mlp forward \(batch 1\): 3 kernels' out profile mlp --batch 1 --runs 1 --trace "$work/b1.json"
# The header counts the fused steps' row reductions: gpt's decomposed softmax
# and layer_norm have some (14 at batch 1 today); --no-fusion none.
expect 0 '^gpt forward \(batch 1\): .*, [1-9][0-9]* elementwise calls \([1-9][0-9]* of them row reductions, [0-9]+ comparisons run inside their where\) in [1-9][0-9]* fused pointwise steps\)' \
    out profile gpt --decompose core --batch 1 --runs 1 --trace "$work/b1.json"
expect 0 ', 0 elementwise calls \(0 of them row reductions, 0 comparisons run inside their where\) in 0 fused pointwise steps\)' \
    out profile gpt --decompose core --batch 1 --runs 1 --no-fusion --trace "$work/b1.json"
expect 2 "bad value 'abc' for --threads" err profile mlp --threads abc
expect 2 "bad value '2x' for --threads" err profile mlp -j 2x
expect 2 "bad value '0' for --threads \(a positive number of threads; omit for all cores\)" err profile mlp --threads 0
expect 2 "bad value ',' for --decompose \(core, none or a comma-separated list" err trace mlp --decompose ,
expect 2 "bad value 'aten::gelu,' for --decompose" err trace mlp --decompose aten::gelu,
expect 2 "bad value 'aten::gelu,,aten::bmm' for --decompose" err trace mlp --decompose aten::gelu,,aten::bmm
expect 2 "bad value '' for --decompose" err trace mlp --decompose ''
expect 2 'usage: tjit graph' err graph
expect 2 "bad value 'xml' for --format" err graph "$work/missing.txt" --format xml
expect 1 "cannot read '$work/missing.txt': No such file" err graph "$work/missing.txt"
expect 1 "cannot read '$work': Is a directory" err graph "$work"
# a graph file is read bounded (256 MiB), not trusting st_size: /dev/zero
# filled memory; a NUL byte is an error naming its place (the text after it
# was silently ignored); a pipe is read as any file.
expect 1 "^tjit graph: '/dev/zero': line 1, column 1: a NUL byte \(byte offset 0\) in text" err graph /dev/zero
truncate -s 257M "$work/huge.txt"
expect 1 "^tjit graph: cannot read '$work/huge\.txt': larger than 256 MiB, the most a text file may hold" err graph "$work/huge.txt"
rm -f "$work/huge.txt"
yes 2>/dev/null | "$tjit" graph /dev/stdin >"$work/out" 2>"$work/err"
grep -q "^tjit graph: cannot read '/dev/stdin': larger than 256 MiB, the most a text file may hold" "$work/err" ||
    { echo "FAIL: tjit graph read an endless pipe without a bound" >&2; sed 's/^/  stderr: /' "$work/err" | head -n 3 >&2; failures=$((failures + 1)); }
printf 'graph(%%x : f32[2]):\n    %%neg = aten.neg.default(%%x)\n  \0  return (%%neg,)\n' >"$work/nul.txt"
expect 1 "^tjit graph: '$work/nul\.txt': line 3, column 3: a NUL byte \(byte offset 54\) in text" err graph "$work/nul.txt"
printf 'graph(%%x : f32[2]):\n    return (%%x,)\n' | "$tjit" graph /dev/stdin >"$work/out" 2>"$work/err"
grep -q '^    return (%x,)' "$work/out" || { echo "FAIL: tjit graph /dev/stdin did not read a pipe" >&2; failures=$((failures + 1)); }
expect 2 "bad value 'bad' for --kind" err ops --kind bad
expect 2 'usage: tjit ops' err ops --kind bad
expect 2 "bad value 'foo' for --table \(core\)" err decomps --table foo
expect 2 "unknown operator 'aten::nope'" err decomps aten::gelu aten::nope
expect 2 "unknown operator 'aten::nope'" err decomps --verify aten::nope
expect 0 '^1 passed, 0 failed' out decomps --verify --cases "$shared/conformance/cases" aten::add
expect 0 'aten::add\.Tensor +nothing to verify: a primitive' out decomps --verify --cases "$shared/conformance/cases" aten::add
expect 1 'aten::exp +nothing to verify: a primitive, no decomposition' out decomps --verify --cases "$shared/conformance/cases" aten::exp
expect 1 "'aten::exp' has no decomposition to verify" err decomps --verify --cases "$shared/conformance/cases" aten::exp aten::gelu
expect 1 '^1 passed, 0 failed' out decomps --verify --cases "$shared/conformance/cases" aten::exp aten::gelu.default
# --cases adds folders to the shared one (repeatable; a folder named twice is read once)
local_cases=${TJ_LOCAL_CASES:-$(dirname "$0")/conformance/cases}
expect 0 'aten::roll +0 ' out decomps --verify aten::roll
expect 0 'aten::gelu +4 .*ok' out decomps --verify --cases "$local_cases" aten::gelu.default aten::roll
expect 0 'aten::roll +18 .*ok' out decomps --verify --cases "$local_cases" aten::gelu.default aten::roll
expect 0 'aten::roll +18 .*ok' out decomps --verify --cases "$local_cases" --cases "$shared/conformance/cases" \
    --cases "$local_cases/" aten::roll
expect 1 "cannot read the conformance cases under '$work/no-such-dir'" err decomps --verify --cases "$local_cases" \
    --cases "$work/no-such-dir" aten::roll
# a missing shared folder: said where it was looked for and how to give it
TJ_SHARED_DIR="$work/no-shared" expect 1 "or set TJ_SHARED_DIR" err decomps --verify aten::roll
# the graph from the standard input
"$tjit" trace mlp >"$work/g.txt" 2>/dev/null
"$tjit" graph - <"$work/g.txt" >"$work/g2.txt" 2>"$work/err" && cmp -s "$work/g.txt" "$work/g2.txt" ||
    { echo "FAIL: tjit graph - did not print back the graph read from stdin" >&2; failures=$((failures + 1)); }
# tjit run: a graph from PyTorch's make_fx (tests/fx_import) on its .npy inputs, against torch's outputs
fx=$(dirname "$0")/fx_import
ln_in=("$fx/layer_norm.in0.npy" "$fx/layer_norm.in1.npy" "$fx/layer_norm.in2.npy")
expect 0 '^output 3 matches .*layer_norm\.out3\.npy' out run "$fx/layer_norm.txt" "${ln_in[@]}" \
    --expect "$fx/layer_norm.out0.npy" --expect "$fx/layer_norm.out1.npy" --expect "$fx/layer_norm.out2.npy" \
    --expect "$fx/layer_norm.out3.npy"
expect 0 '^output 0 matches .*' out run "$fx/layer_norm.txt" "${ln_in[@]}" --decompose core --expect "$fx/layer_norm.out0.npy"
expect 0 'timed runs?: median [0-9.e+]+ (us|ms)' out run "$fx/layer_norm.txt" "${ln_in[@]}" --runs 3
expect 0 "written to $work/ln_1\.npy" out run "$fx/layer_norm.txt" "${ln_in[@]}" --out "$work/ln_"
"$tjit" run "$fx/layer_norm.txt" "${ln_in[@]}" --expect "$work/ln_0.npy" --atol 0 --rtol 0 >/dev/null 2>&1 ||
    { echo "FAIL: tjit run --out did not write the outputs it printed" >&2; failures=$((failures + 1)); }
# a reference among the files --out writes is read before they are written
# (it was overwritten by the output first, then matched it)
cp "$fx/layer_norm.out1.npy" "$work/lnref_0.npy"
expect 1 "^output 0 DIFFERS from $work/lnref_0\.npy" out run "$fx/layer_norm.txt" "${ln_in[@]}" --out "$work/lnref_" \
    --expect "$work/lnref_0.npy"
expect 1 '^output 0 DIFFERS from .*layer_norm\.out1\.npy' out run "$fx/layer_norm.txt" "${ln_in[@]}" \
    --expect "$fx/layer_norm.out1.npy"
expect 1 "^tjit run: the graph takes 3 inputs, 1 \.npy file given" err run "$fx/layer_norm.txt" "$fx/layer_norm.in0.npy"
expect 1 "^tjit run: output 0 is f32\[3, 6\], .*layer_norm\.out2\.npy holds f32\[3, 1\]" err run "$fx/layer_norm.txt" \
    "${ln_in[@]}" --expect "$fx/layer_norm.out2.npy"
expect 1 "^tjit run: .*cannot open '$work/missing\.npy'" err run "$fx/layer_norm.txt" "$work/missing.npy" \
    "$fx/layer_norm.in1.npy" "$fx/layer_norm.in2.npy"
expect 1 "^tjit run: .*input 0" err run "$fx/layer_norm.txt" "$fx/layer_norm.in1.npy" "$fx/layer_norm.in1.npy" \
    "$fx/layer_norm.in2.npy"
expect 1 "^tjit run: 2 --expect files for 1 output" err run "$fx/mlp_constants.txt" "$fx/mlp_constants.in0.npy" \
    --expect "$fx/mlp_constants.out0.npy" --expect "$fx/mlp_constants.out0.npy"
# an input the graph updates in place is named, and written with --out; --quiet prints no values
printf 'graph(%%w : f32[6], %%b : f32[6]):\n    %%add_ = aten.add_.Tensor(%%w, %%b)\n    %%sum = aten.sum.default(%%add_)\n    return (%%sum,)\n' >"$work/update.txt"
expect 0 "^input 0 \(f32\[6\]\) was updated in place: written to $work/u_in0\.npy" out run "$work/update.txt" \
    "$fx/layer_norm.in1.npy" "$fx/layer_norm.in2.npy" --out "$work/u_" --quiet
grep -q '^tensor' "$work/out" && { echo "FAIL: tjit run --quiet printed values" >&2; failures=$((failures + 1)); }
printf 'graph(%%x : f32[2]):\n    %%t = aten._to_copy.default(%%x, dtype = torch.complex64)\n    return (%%t,)\n' >"$work/complex.txt"
expect 1 "line 2, column 44: unknown dtype torch\.complex64 \(tjit has torch\.float32, float64, int64, bool, int32, uint8, int8, int16, float16 and bfloat16\)" err run "$work/complex.txt"
expect 2 "bad value '2147483647' for --runs \(a positive integer up to 1000000\)" err run "$fx/layer_norm.txt" --runs 2147483647
expect 2 "bad value '1000001' for --runs" err bench mlp --runs 1000001
expect 1 "^tjit run: tj_npy_save: path of 4095 bytes is too long" err run "$fx/layer_norm.txt" "${ln_in[@]}" \
    --out "$work/$(printf 'x%.0s' $(seq 5000))"
expect 2 "bad value '-1' for --atol" err run "$fx/layer_norm.txt" --atol -1
expect 2 "bad value 'cor' for --decompose" err run "$fx/layer_norm.txt" --decompose cor
expect 2 '^tjit run: missing the graph FILE' err run
expect 2 'usage: tjit decomps' err decomps --cases "$local_cases"
expect 2 '^tjit decomps: --cases and -v go with --verify' err decomps --cases "$local_cases"
expect 2 '^tjit decomps: --cases and -v go with --verify' err decomps -v
expect 2 '^tjit decomps: --table core prints the whole table and takes no OPs' err decomps --table core aten::add
expect 2 '^tjit decomps: --verify takes no --table' err decomps --verify --table core
expect 0 'no registered decomposition:' out decomps aten::bmm
expect 0 'aten::add\.Scalar -> ' out decomps aten::add
expect 2 'usage: tjit demo' err demo extra

# conform: a path that cannot be read, or without any case, fails naming it;
# the conformance folder itself is read through its cases/ folder.
mkdir "$work/empty"
expect 1 "^FAIL $work/no-such-case: cannot read it" out conform "$work/no-such-case"
expect 1 "^FAIL $work/empty: no conformance case" out conform "$work/empty"
expect 1 '0 passed, 1 failed' out conform "$work/empty/"
expect 0 '^[1-9][0-9]* passed, 0 failed' out conform "$shared/conformance"
expect 0 '^[1-9][0-9]* passed, 0 failed' out conform "$shared/conformance/cases"
# a case.json is read as graph text is, bounded and refusing a NUL byte
mkdir -p "$work/zero-cases/zero" && ln -s /dev/zero "$work/zero-cases/zero/case.json"
expect 1 "^FAIL zero: case\.json: '$work/zero-cases/zero/case\.json': line 1, column 1: a NUL byte" out conform "$work/zero-cases"
# no PATH at all is named, as every command's missing operand is
expect 2 '^tjit conform: missing a PATH' err conform
expect 2 '^tjit conform: missing a PATH' err conform -v

# profile --trace writes through a temporary file renamed at the end (a
# missing folder is refused before the runs, above): a write failure names
# the path and the reason and leaves no temporary, and an existing file as
# it was. ulimit -f 1 (SIGXFSZ ignored) fails writes past
# 1 KiB with EFBIG; the table goes to /dev/null, which the limit spares.
echo old >"$work/keep.json"
(trap '' XFSZ; ulimit -f 1; exec "$tjit" profile mlp --train --batch 1 --runs 1 --trace "$work/keep.json") \
    >/dev/null 2>"$work/err" </dev/null
got=$?
if [ "$got" -ne 1 ] || ! grep -q "cannot write '$work/keep.json': File too large (left as it was)" "$work/err" ||
    [ "$(cat "$work/keep.json")" != old ] || ls "$work" | grep -q 'keep\.json\.tmp'; then
    echo "FAIL: tjit profile --trace over a file it fails to write -> status $got, file: $(head -c 60 "$work/keep.json")" >&2
    sed 's/^/  stderr: /' "$work/err" | head -n 5 >&2
    ls "$work" | sed 's/^/  in work: /' >&2
    failures=$((failures + 1))
fi
expect 0 "trace written to $work/keep.json" out profile mlp --train --batch 1 --runs 1 --trace "$work/keep.json"
grep -q '"traceEvents"' "$work/keep.json" || { echo "FAIL: profile --trace wrote no trace" >&2; failures=$((failures + 1)); }

# A printed graph parses back and prints the same.
expect 0 '^graph\(' out trace mlp --train
cp "$work/out" "$work/mlp.txt"
expect 0 '^graph\(' out graph "$work/mlp.txt"
cmp -s "$work/out" "$work/mlp.txt" || { echo "FAIL: tjit graph does not print back what tjit trace printed" >&2; failures=$((failures + 1)); }

# A placeholder bound to its traced geometry (an as_strided gradient) keeps
# offset and bind through `tjit graph`, in text and in JSON.
printf '%s\n' 'graph(%w : f32[2, 3]{4, 1} offset 1 bound "aten::as_strided'"'"'s gradient"):' \
    '    %neg = aten.neg.default(%w)' '    return (%neg,)' >"$work/bound.txt"
expect 0 '^graph\(' out graph "$work/bound.txt"
cmp -s "$work/out" "$work/bound.txt" || { echo "FAIL: tjit graph lost a placeholder's offset or bind" >&2; failures=$((failures + 1)); }
expect 0 '"geometry_bound": "aten::as_strided'"'"'s gradient"' out graph --format json "$work/bound.txt"
expect 0 '"offset": 1' out graph --format json "$work/bound.txt"

# Standard output on a full disk (/dev/full): the printing fails at its
# flush, and the command says so and exits 1 (it used to exit 0, the error
# found only by exit's unchecked flush). The same for each output format.
for fmt in text dot json; do
    expect_stdout=/dev/full expect 1 "^tjit graph: tj_graph_(print|write_dot|write_json): write failed: No space left on device$" \
        err graph --format "$fmt" "$work/mlp.txt"
done
expect_stdout=/dev/full expect 1 "^tjit decomps: tj_decomp_table_print: write failed: No space left on device$" err decomps

# Commands that print with printf (a listing, --help) fail the same way
# (they exited 0 with their output lost).
for args in "ops" "--help" "ops --help" "demo"; do
    # shellcheck disable=SC2086
    expect_stdout=/dev/full expect 1 "^tjit( [a-z]*)?: cannot write standard output: No space left on device$" err $args
done

# fuzz/run.sh (not tjit, but its build step had the same silent failure):
# a build that fails prints the compiler's output and names the command, on
# a build directory whose fuzz/fuzz_npy target does not compile.
mkdir -p "$work/broken/fuzz"
printf "project('broken', 'c')\nsubdir('fuzz')\n" >"$work/broken/meson.build"
printf "executable('fuzz_npy', 'fuzz_npy.c')\n" >"$work/broken/fuzz/meson.build"
printf '#error deliberately broken fuzz target\n' >"$work/broken/fuzz/fuzz_npy.c"
if meson setup "$work/broken-build" "$work/broken" >/dev/null 2>&1; then
    "$(dirname "$0")/../fuzz/run.sh" npy 1 "$work/broken-build" >"$work/out" 2>"$work/err" </dev/null
    got=$?
    if [ "$got" -eq 0 ] || ! grep -q 'deliberately broken fuzz target' "$work/out" ||
        ! grep -q "failed: meson compile -C $work/broken-build fuzz/fuzz_npy" "$work/err"; then
        echo "FAIL: fuzz/run.sh with a failing build -> status $got, should show the compiler error and the command" >&2
        sed 's/^/  stdout: /' "$work/out" | head -n 5 >&2
        sed 's/^/  stderr: /' "$work/err" | head -n 5 >&2
        failures=$((failures + 1))
    fi
else
    echo "FAIL: meson setup of the broken fuzz project failed" >&2
    failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo "all checks passed"

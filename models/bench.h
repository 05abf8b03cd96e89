/* Benchmarks of the WORKLOADS.md workloads, as `tjit bench` runs them.
 *
 * Models (mlp, cnn, gpt, block768): the forward pass (no gradients) and, for
 * the trainable ones, the whole training step, in modes eager, traced,
 * decomposed and jit (trainer.h's: a tj_jit of the forward pass; for the
 * training step, the loss through a tj_jit with gradients, tj_backward
 * through its compiled backward and the eager optimiser, as PyTorch trains a
 * torch.compile'd model). Every mode is checked against eager mode before
 * anything is timed. Training steps all start from the same state: the
 * parameters and optimiser state after 3 steps from seed 0 on the benchmark
 * batch, restored (untimed) before each timed step. The modes' timed runs are
 * interleaved (eager, traced, decomposed, jit, eager, ...) so that the
 * machine's drift moves them together and their ratios hold.
 *
 * Micro-benchmarks (bench_ops.c): dispatch (tj_add of two f32[1]; also with
 * one pass-through mode), copy (memcpy of 64 MiB over the threads), gelu
 * (erf) of f32[16 Mi], softmax and layer_norm over the last dim of
 * f32[4096, 1024] (GB/s of bytes read and written; each allocating its result
 * and, as NAME_out, into a preallocated output), mm 1024^3 (GFLOP/s; and
 * cblas_sgemm called directly), sdpa [1, 12, 128, 64] causal (fused and
 * decomposed, ms), mlp_b1 (mlp forward on x [1, 784] in the four modes)
 * and trace (make_fx of the gpt training step, fake mode, core
 * decomposition table). Each variant is its own result (name == what).
 *
 * Each figure is the median of at least `runs` timed calls after warm-up,
 * with the minor page faults per call (getrusage) and, for the replayed
 * modes' plans, the arena size (tj_plan_stats). */
#ifndef TJIT_MODELS_BENCH_H
#define TJIT_MODELS_BENCH_H

#include <stdio.h>

#include "trainer.h"

/** One measured figure. */
typedef struct bench_result {
    char name[16];          /**< workload: "mlp", "gelu", ... */
    char what[16];          /**< "forward", "train", or the micro-benchmark's name */
    char mode[16];          /**< "eager", "traced", "decomposed", "jit" */
    int threads;
    int runs;               /**< timed calls */
    double median_ms;       /**< per call */
    double min_ms;          /**< fastest call */
    double cpu_ms;          /**< median of the calling thread's CPU time per call (time descheduled excluded;
                                 the whole work only with 1 thread) */
    double faults_per_call; /**< minor page faults per timed call */
    double value;           /**< the workload's own figure (ms, us, ns, GB/s or GFLOP/s) */
    const char *unit;       /**< "ms", "us", "ns", "GB/s", "GFLOP/s" */
    long long arena_bytes;  /**< plan arena of a replayed mode; -1 otherwise */
    int kernels;            /**< kernel calls per replayed run; 0 otherwise */
} bench_result;

/** A growing list of results. */
typedef struct bench_results {
    bench_result *items;
    int n, cap;
} bench_results;

void bench_results_free(bench_results *r);
/** The result for (name, what, mode, threads), or NULL. */
const bench_result *bench_results_find(const bench_results *r, const char *name, const char *what, const char *mode,
                                       int threads);

typedef struct bench_options {
    const int *threads; /**< thread counts to measure, each set with tj_set_num_threads */
    int n_threads;
    int runs;           /**< timed calls per figure (at least; cheap workloads get more) */
    FILE *log;          /**< progress lines (NULL: none) */
    bool native_code;   /**< replayed modes compiled with tj_compile_options.native_code (a plan
                             whose native code is not built is an error: TJ_ERR_UNSUPPORTED) */
} bench_options;

/** Names of the models and micro-benchmarks, NULL-terminated. */
extern const char *const bench_model_names[];
extern const char *const bench_micro_names[];
/** True for a model or micro-benchmark name. */
bool bench_known(const char *name);
/** The model whose reference files (bench_export) bench/torch_ref.py reads
 * for micro-benchmark `name` (mlp_b1: mlp, trace: gpt), or NULL. */
const char *bench_micro_model(const char *name);

/** Benchmarks one model's forward pass and training step in the four modes
 * for every thread count; appends to `out`. Fails (TJ_ERR_INVALID_ARGUMENT,
 * naming the model, mode and largest difference) when a mode disagrees with
 * eager mode beyond float32 round-off. */
tj_status bench_model(const char *id, const bench_options *o, bench_results *out);
/** mlp forward on x [1, 784] in the four modes, in us ("mlp_b1"). */
tj_status bench_model_b1(const bench_options *o, bench_results *out);
/** Runs one micro-benchmark for every thread count; appends to `out`. */
tj_status bench_micro(const char *name, const bench_options *o, bench_results *out);

/** Writes the reference files bench/torch_ref.py checks PyTorch against, for
 * the `n` models named in `ids` (ids of bench_model_names), into directory
 * `dir` (created if missing):
 * MODEL.safetensors (parameters from seed 0), MODEL_x.npy and MODEL_y.npy
 * (the benchmark batch), MODEL_out.npy (eager forward output) and, for
 * trainable models, MODEL_step1.safetensors (parameters after one training
 * step from fresh optimiser state); reference.json lists the files and each
 * model's loss on that step. */
tj_status bench_export(const char *dir, const char *const *ids, int n);

/* ---- shared by the benchmark files ---- */
/** A timed workload: `call` is timed, `prepare` (may be NULL) runs untimed
 * before each call (restoring the state a training step starts from). */
typedef struct bench_case {
    tj_status (*prepare)(void *ctx);
    tj_status (*call)(void *ctx);
    void *ctx;
} bench_case;

/** Timings of one case: per call, in ms (cpu_ms: the calling thread's CPU time). */
typedef struct bench_timing {
    int runs;
    double median_ms, min_ms, cpu_ms, faults_per_call;
} bench_timing;

/** The most timed runs a command asks for (--runs): every run's times are
 * kept (16 bytes a run and case), so 2^31 runs asked for 32 GiB up front. */
#define BENCH_MAX_RUNS 1000000

/** Times `n` cases with their calls interleaved (case 0, 1, ..., 0, 1, ...):
 * `warmup` untimed rounds, then at least `runs` timed rounds, more for cheap
 * cases (about a quarter of a second in all, at most 400 rounds). */
tj_status bench_measure(const bench_case *cases, int n, int runs, int warmup, bench_timing *out);
/** Appends a result; its value is filled from the timing: for a time unit,
 * median ms times `scale` (1 for "ms", 1e3 for "us"; divide by the calls a
 * timed call makes); for a throughput unit ("GB/s", "GFLOP/s"), `scale` is
 * the work per call (GB, GFLOP) and the value that over the median. */
tj_status bench_add(bench_results *r, const char *name, const char *what, const char *mode, int threads,
                    const bench_timing *t, double scale, const char *unit, long long arena_bytes, int kernels);

/** The benchmark batch of a model: x of its WORKLOADS.md shape with `batch`
 * rows (0: the model's own), from fixed seeds; y the targets (trainable
 * models; else NULL). New references owned by the caller, not by any scope. */
tj_status bench_batch(const model *m, int64_t batch, tj_tensor **x, tj_tensor **y);
/** Largest |a - b| / (atol + rtol |b|) over the elements of two float32
 * tensors of one shape (any strides); <= 1 means they agree. Returns a huge
 * value for different shapes, dtypes or NaN. */
double bench_mismatch(const tj_tensor *a, const tj_tensor *b, double atol, double rtol);

#endif

/* Strided gathers and tiled window copies in strided copies
 * (kernels/copy.c, kernels/copy_avx512.c): runs of 4-byte elements read
 * with a small stride into a contiguous destination go a block at a time
 * through tj_k_gather_runs32_* (two-source permutes for stride 2, masked
 * gathers above), and copies whose outer dims re-read the same source lines
 * (pooling's windows, [kh, kw, N*C, oh, ow]) are walked in source blocks
 * that fit in cache. Every element must land where a naive strided loop
 * puts it, byte for byte, at 1-3 threads, nothing else written, and no
 * source byte outside the runs read. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels/copy.h"
#include "test_util.h"
#include "tjit/tjit.h"

/* Distinct bit patterns (NaN payloads and negative zero among the floats). */
static void fill_bytes(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) b[i] = (uint8_t)(i * 2654435761u >> 13);
}

static size_t esize(tj_dtype d) { return d == TJ_BOOL ? 1 : d == TJ_FLOAT32 ? 4 : 8; }

/* The naive copy: element by element over the row-major index, es bytes. */
static void naive_copy(char *dst, const int64_t *ds, const char *src, const int64_t *ss, int nd, const int64_t *shape,
                       size_t es)
{
    int64_t numel = 1, idx[TJ_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) numel *= shape[d];
    for (int64_t f = 0; f < numel; f++) {
        int64_t so = 0, dof = 0;
        for (int d = 0; d < nd; d++) so += idx[d] * ss[d], dof += idx[d] * ds[d];
        memcpy(dst + dof * (int64_t)es, src + so * (int64_t)es, es);
        for (int d = nd - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
}

typedef void (*gather_fn)(uint32_t *, int64_t, const uint32_t *, int64_t, int64_t, int64_t, int64_t);

Test(copy_gather, gather_movers_copy_every_length_and_stride_and_touch_nothing_else)
{
    /* 3 runs of every length 0-70 for strides 2-16, at odd steps, both
     * movers (the generic one runs only on machines without AVX-512); the
     * destination words between runs keep their canary */
    enum { RUNS = 3, PAD = 3, MAXLEN = 70 };
    static uint32_t src[RUNS * (MAXLEN * TJ_K_GATHER_MAX_STRIDE + 5) + 16], dst[RUNS * (MAXLEN + 3) + 2 * PAD];
    fill_bytes(src, sizeof src);
    const gather_fn movers[2] = {tj_k_gather_runs32_generic, tj_k_gather_runs32_avx512};
    for (int m = 0; m < (test_cpu_has_avx512() ? 2 : 1); m++)
        for (int64_t ss = 2; ss <= TJ_K_GATHER_MAX_STRIDE; ss++)
            for (int64_t len = 0; len <= MAXLEN; len++) {
                int64_t dstep = len + 3, sstep = len * ss + 5;
                memset(dst, 0x5a, sizeof dst);
                movers[m](dst + PAD, dstep, src + 1, sstep, RUNS, len, ss);
                for (int64_t i = 0; i < (int64_t)(sizeof dst / sizeof *dst); i++) {
                    int64_t r = (i - PAD) / dstep, at = (i - PAD) % dstep;
                    bool in_run = i >= PAD && r < RUNS && at < len;
                    uint32_t want = in_run ? src[1 + r * sstep + at * ss] : 0x5a5a5a5au;
                    cr_assert_eq(dst[i], want, "mover %d, stride %ld, length %ld: word %ld", m, (long)ss, (long)len,
                                 (long)i);
                }
            }
}

Test(copy_gather, gather_movers_read_nothing_past_the_last_run)
{
    /* the last element of the last run is the last word before an
     * inaccessible page: a read past it would fault */
    long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(map, MAP_FAILED);
    cr_assert_eq(mprotect(map + 2 * page, (size_t)page, PROT_NONE), 0);
    uint32_t *end = (uint32_t *)(void *)(map + 2 * page), dst[2 * 40];
    fill_bytes(map, (size_t)page * 2);
    const gather_fn movers[2] = {tj_k_gather_runs32_generic, tj_k_gather_runs32_avx512};
    for (int m = 0; m < (test_cpu_has_avx512() ? 2 : 1); m++)
        for (int64_t ss = 2; ss <= TJ_K_GATHER_MAX_STRIDE; ss++)
            for (int64_t len = 1; len <= 40; len++) {
                const uint32_t *s = end - (len - 1) * ss - 1 - (len * ss + 1); /* two runs, sstep len*ss + 1 */
                movers[m](dst, len, s, len * ss + 1, 2, len, ss);
                for (int64_t r = 0; r < 2; r++)
                    for (int64_t i = 0; i < len; i++)
                        cr_assert_eq(dst[r * len + i], s[r * (len * ss + 1) + i * ss], "stride %ld, length %ld",
                                     (long)ss, (long)len);
            }
    munmap(map, (size_t)page * 3);
}

/* x [n, c, h, w] (a slice of a bigger tensor: storage offset) cut into
 * pooling windows of k x k at stride s and laid out [kh, kw, n, c, oh, ow]
 * by tj_to_copy, compared with the window definition. */
static void check_pool_windows(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s)
{
    tj_scope *scope = tj_scope_begin();
    tj_tensor *big = tj_tensor_empty(TJ_FLOAT32, 4, (int64_t[]){n + 1, c, h, w});
    fill_bytes(tj_tensor_data(big), (size_t)tj_tensor_numel(big) * 4);
    tj_tensor *x = tj_slice(big, 0, true, 1, true, n + 1, 1);
    tj_tensor *win = tj_unfold(tj_unfold(x, 2, k, s), 3, k, s); /* [n, c, oh, ow, k, k] */
    tj_tensor *v = tj_permute(win, (int64_t[]){4, 5, 0, 1, 2, 3}, 6);
    cr_assert_not_null(v, "%s", tj_last_error());
    int64_t oh = (h - k) / s + 1, ow = (w - k) / s + 1;
    const float *xs = (const float *)tj_tensor_data(big) + c * h * w;
    for (int threads = 1; threads <= 3; threads++) {
        tj_set_num_threads(threads);
        tj_tensor *out = tj_to_copy(v, -1);
        cr_assert_not_null(out, "%s", tj_last_error());
        const float *os = tj_tensor_data(out);
        int64_t at = 0;
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < k; j++)
                for (int64_t b = 0; b < n * c; b++)
                    for (int64_t y = 0; y < oh; y++)
                        for (int64_t z = 0; z < ow; z++, at++)
                            cr_assert(memcmp(&os[at], &xs[(b * h + y * s + i) * w + z * s + j], 4) == 0,
                                      "[%ld, %ld, %ld, %ld] k %ld s %ld, %d threads: element %ld", (long)n, (long)c,
                                      (long)h, (long)w, (long)k, (long)s, threads, (long)at);
    }
    tj_scope_end(scope);
}

Test(copy_gather, pooling_windows_copy_exactly_tiled_or_not)
{
    int saved = tj_get_num_threads();
    /* tiled: 2x2 stride 2 over 300 planes of 30 x 30 (1 MiB of source, a
     * leftover block), runs of 15 */
    check_pool_windows(3, 100, 30, 30, 2, 2);
    /* tiled, runs of 16 and of 7 (one vector; under one) */
    check_pool_windows(4, 80, 32, 32, 2, 2);
    check_pool_windows(8, 160, 14, 14, 2, 2);
    /* 3x3 stride 2 (overlapping windows, runs of 33: two vectors and a tail) */
    check_pool_windows(2, 3, 67, 67, 3, 2);
    /* stride 3 (a masked gather), one plane, 1-element windows rows */
    check_pool_windows(1, 1, 9, 50, 3, 3);
    check_pool_windows(1, 2, 3, 3, 3, 3);
    tj_set_num_threads(saved);
}

Test(copy_gather, tiled_copies_of_every_dtype_and_negative_strides_match_a_naive_copy)
{
    /* [2, 2, planes, 15, 15] windows of a [planes, 30, 30] source, with a
     * 1-element dim; every dtype; then the planes walked backwards (a
     * negative stride) and the rows backwards */
    enum { PLANES = 601, H = 30, W = 30 };
    const tj_dtype dtypes[] = {TJ_BOOL, TJ_FLOAT32, TJ_INT64, TJ_FLOAT64};
    int64_t shape[6] = {2, 2, 1, PLANES, 15, 15}, ds[6];
    int64_t numel = 1;
    for (int d = 5; d >= 0; d--) ds[d] = numel, numel *= shape[d];
    const int64_t strides[3][6] = {
        {W, 1, 7, H * W, 2 * W, 2},
        {W, 1, 7, -H * W, 2 * W, 2},
        {W, 1, 7, H * W, -2 * W, 2},
    };
    const int64_t first[3] = {0, (PLANES - 1) * H * W, 14 * 2 * W};
    for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++) {
        size_t es = esize(dtypes[k]);
        char *src = malloc((size_t)PLANES * H * W * es), *dst = malloc((size_t)numel * es),
             *ref = malloc((size_t)numel * es);
        fill_bytes(src, (size_t)PLANES * H * W * es);
        for (int v = 0; v < 3; v++)
            for (int threads = 1; threads <= 3; threads++) {
                memset(dst, 0x5a, (size_t)numel * es);
                memset(ref, 0x5a, (size_t)numel * es);
                const char *s0 = src + first[v] * (int64_t)es;
                tj_k_copy_strided((tj_k_strided){dst, dtypes[k], ds}, (tj_k_strided){(void *)s0, dtypes[k], strides[v]},
                                  6, shape, threads);
                naive_copy(ref, ds, s0, strides[v], 6, shape, es);
                cr_assert(memcmp(dst, ref, (size_t)numel * es) == 0, "dtype %d, strides %d, %d threads",
                          (int)dtypes[k], v, threads);
            }
        free(src);
        free(dst);
        free(ref);
    }
}

Test(copy_gather, short_runs_into_a_destination_past_the_streaming_size_copy_exactly)
{
    /* im2col-like [5, 5, 20, 190, 23] from [20, 200, 27] planes (runs of 23
     * floats, 8.7 MB of destination: streamed through a staging buffer,
     * partial cache lines at block ends), 1 and 2 threads */
    int64_t shape[5] = {5, 5, 20, 190, 23}, ss[5] = {27, 1, 200 * 27, 27, 1}, ds[5], numel = 1;
    for (int d = 4; d >= 0; d--) ds[d] = numel, numel *= shape[d];
    size_t sn = 20 * 200 * 27;
    float *src = malloc(sn * 4), *dst = malloc((size_t)numel * 4), *ref = malloc((size_t)numel * 4);
    fill_bytes(src, sn * 4);
    naive_copy((char *)ref, ds, (const char *)src, ss, 5, shape, 4);
    for (int threads = 1; threads <= 2; threads++) {
        memset(dst, 0x5a, (size_t)numel * 4);
        tj_k_copy_strided((tj_k_strided){dst, TJ_FLOAT32, ds}, (tj_k_strided){src, TJ_FLOAT32, ss}, 5, shape, threads);
        cr_assert(memcmp(dst, ref, (size_t)numel * 4) == 0, "%d threads", threads);
    }
    free(src);
    free(dst);
    free(ref);
}

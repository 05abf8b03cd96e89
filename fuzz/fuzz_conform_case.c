/* libFuzzer target: the conformance case decoder and runner
 * (tools/conform.h). Each input is a case.json, written into a case folder
 * that holds a few .npy files (in0.npy ... in7.npy, out0.npy ... out3.npy) of
 * assorted dtypes and shapes; the case is decoded and dispatched, so that any
 * operator meets arbitrary arguments. A failing case must say why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "tools/conform.h"

static char dir[64], json_path[96];

static void save(const char *name, tj_tensor *t)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!t || tj_npy_save(path, t) != TJ_OK) {
        fprintf(stderr, "cannot write %s: %s\n", path, tj_last_error());
        abort();
    }
    tj_tensor_release(t);
}

static tj_tensor *ramp(tj_dtype dt, int ndim, const int64_t *shape)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    void *d = t ? tj_tensor_data(t) : NULL;
    for (int64_t i = 0; d && i < tj_tensor_numel(t); i++) switch (dt) {
        case TJ_FLOAT32: ((float *)d)[i] = (float)(i % 11) * 0.5f - 2.0f; break;
        case TJ_FLOAT64: ((double *)d)[i] = (double)(i % 9) * 0.25 - 1.0; break;
        case TJ_INT64: ((int64_t *)d)[i] = i % 3; break;
        case TJ_BOOL: ((bool *)d)[i] = i % 2; break;
        default: memset((char *)d + i * (int64_t)tj_dtype_size(dt), 0, tj_dtype_size(dt)); break;
        }
    return t;
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) perror(cmd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_setup();
    snprintf(dir, sizeof dir, "/dev/shm/tjit_fuzz_case_%d", (int)getpid());
    if (mkdir(dir, 0700) != 0 && access(dir, W_OK) != 0) abort();
    snprintf(json_path, sizeof json_path, "%s/case.json", dir);
    save("in0.npy", ramp(TJ_FLOAT32, 2, (int64_t[]){3, 4}));
    save("in1.npy", ramp(TJ_FLOAT32, 1, (int64_t[]){4}));
    save("in2.npy", ramp(TJ_INT64, 1, (int64_t[]){3}));
    save("in3.npy", ramp(TJ_BOOL, 2, (int64_t[]){3, 4}));
    save("in4.npy", ramp(TJ_FLOAT32, 0, NULL));
    save("in5.npy", ramp(TJ_FLOAT32, 2, (int64_t[]){0, 4}));
    save("in6.npy", ramp(TJ_FLOAT64, 2, (int64_t[]){2, 3}));
    save("in7.npy", ramp(TJ_FLOAT32, 4, (int64_t[]){2, 3, 5, 5}));
    save("out0.npy", ramp(TJ_FLOAT32, 2, (int64_t[]){3, 4}));
    save("out1.npy", ramp(TJ_INT64, 1, (int64_t[]){4}));
    save("out2.npy", ramp(TJ_FLOAT32, 1, (int64_t[]){3}));
    save("out3.npy", ramp(TJ_BOOL, 0, NULL));
    atexit(remove_dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write_file(json_path, data, size);
    char why[1024] = "";
    tj_clear_error();
    tj_case_result r = tj_conform_run_case(dir, why, sizeof why);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "%s %s\n", r == TJ_CASE_PASS ? "PASS" : r == TJ_CASE_SKIP ? "SKIP" : "FAIL", why);
    if (r != TJ_CASE_PASS && !why[0]) {
        fprintf(stderr, "a case that did not pass gave no reason\n");
        abort();
    }
    return 0;
}

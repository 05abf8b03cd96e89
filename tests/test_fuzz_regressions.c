/* Fuzzing regressions (issue 9): every input in fuzz/regressions/<target>/
 * (inputs that once crashed a target, kept after the fix) and every seed in
 * fuzz/corpus/<target>/ goes through the target's own checks (the fuzz_<target>.c files,
 * linked here with renamed entry points: a finding aborts the test), and the
 * regressions known to fail are checked for their error. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/idx.h"
#include "tjit/tjit.h"

typedef int (*fuzz_init_fn)(int *argc, char ***argv);
typedef int (*fuzz_one_fn)(const uint8_t *data, size_t size);

#define TARGET(name)                                      \
    int fuzz_##name##_init(int *argc, char ***argv);       \
    int fuzz_##name##_one(const uint8_t *data, size_t size);
TARGET(graph_parse)
TARGET(npy)
TARGET(safetensors)
TARGET(idx)
TARGET(conform_case)

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)size + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return buf;
}

/* Runs every file of fuzz/<kind>/<target>/ through the target; returns how
 * many there were. */
static int replay_dir(const char *kind, const char *target, fuzz_one_fn one)
{
    char dir[256];
    snprintf(dir, sizeof dir, "fuzz/%s/%s", kind, target);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t size;
        unsigned char *data = read_all(path, &size);
        cr_log_info("%s", path);
        one(data, size);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

static void replay(const char *target, fuzz_init_fn init, fuzz_one_fn one)
{
    init(NULL, NULL);
    int seeds = replay_dir("corpus", target, one);
    replay_dir("regressions", target, one);
    cr_assert_gt(seeds, 0, "no seeds for %s: run the test from the source root", target);
}

Test(fuzz_regressions, graph_parse_inputs_run_clean, .timeout = 300) { replay("graph_parse", fuzz_graph_parse_init, fuzz_graph_parse_one); }
Test(fuzz_regressions, npy_inputs_run_clean) { replay("npy", fuzz_npy_init, fuzz_npy_one); }
Test(fuzz_regressions, safetensors_inputs_run_clean) { replay("safetensors", fuzz_safetensors_init, fuzz_safetensors_one); }
Test(fuzz_regressions, idx_inputs_run_clean) { replay("idx", fuzz_idx_init, fuzz_idx_one); }
Test(fuzz_regressions, conform_case_inputs_run_clean, .timeout = 300) { replay("conform_case", fuzz_conform_case_init, fuzz_conform_case_one); }

/* ---- the findings, one by one ---- */

static tj_tensor *load_npy_regression(const char *name)
{
    char path[256];
    size_t n;
    snprintf(path, sizeof path, "fuzz/regressions/npy/%s", name);
    unsigned char *data = read_all(path, &n);
    tj_tensor *t = tj_npy_load_buffer(data, n);
    free(data);
    return t;
}

/* The 'shape' key ended the header: the parser read the byte after it.
 * (Keys are now read only where a dict key starts: its stray 'f4' entry is
 * refused first.) */
Test(fuzz_regressions, npy_shape_key_at_the_end_of_the_header_is_a_parse_error)
{
    cr_assert_null(load_npy_regression("shape_key_at_end_of_header.npy"));
    cr_assert_eq(tj_last_status(), TJ_ERR_PARSE);
    cr_assert(strstr(tj_last_error(), "tj_npy_load: header key 'f4' is not one of"), "%s", tj_last_error());
}

/* An empty shape whose other sizes multiply past int64: the contiguous
 * strides overflowed (signed overflow) while the element count was 0. */
Test(fuzz_regressions, npy_empty_shape_whose_strides_overflow_is_an_overflow_error)
{
    /* its header opens with '[', no dict: refused before its shape is read
     * (npy::shape_overflow loads such a shape from a well-formed header) */
    cr_assert_null(load_npy_regression("empty_shape_with_overflowing_strides.npy"));
    cr_assert_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
    cr_assert(strstr(tj_last_error(), "header has no 'descr'"), "%s", tj_last_error());
    cr_assert_null(tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){0, INT64_MAX / 2, 4}));
    cr_assert_eq(tj_last_status(), TJ_ERR_OVERFLOW);
    tj_tensor *ok = tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){0, 1 << 20, 4});
    cr_assert_not_null(ok, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_numel(ok), 0);
    cr_assert_eq(tj_tensor_strides(ok)[0], 4 << 20);
    tj_tensor_release(ok);
}

/* A 20-byte IDX file declaring 2^34 bytes: the reader allocated 16 GiB
 * before finding the data missing; it now grows its buffer with the data. */
Test(fuzz_regressions, idx_file_declaring_more_than_it_holds_is_truncated_without_allocating_it)
{
    cr_assert_null(idx_load_u8("fuzz/regressions/idx/declares_16_gib_holds_4_bytes.idx"));
    cr_assert_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
    cr_assert(strstr(tj_last_error(), "is truncated: expected 17179869184 data bytes"), "%s", tj_last_error());
}

/* "_" for a computed result (native_dropout's mask) left the graph without a
 * value for it, and the compiled plan handed the kernel a NULL output. */
Test(fuzz_regressions, unnamed_result_in_graph_text_still_gets_a_buffer)
{
    size_t n;
    unsigned char *text = read_all("fuzz/regressions/graph_parse/unnamed_dropout_mask.txt", &n);
    text[n] = 0;
    tj_graph *g = tj_graph_parse((const char *)text);
    free(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_scope *s = tj_scope_begin();
    float xd[12];
    bool bd[12];
    for (int i = 0; i < 12; i++) xd[i] = (float)i, bd[i] = i % 2;
    tj_tensor *in[3] = {tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){3, 4}, xd),
                        tj_tensor_from_data(TJ_BOOL, 2, (int64_t[]){3, 4}, bd), tj_tensor_scalar_f64(2.0)};
    tj_tensor *outs[2];
    cr_assert_eq(tj_plan_run(p, in, 3, outs), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(outs[0]), 2);
    cr_assert_eq(tj_tensor_size(outs[0], 0), 2);
    cr_assert_eq(tj_tensor_item_at(outs[1], 0), 2.0);
    tj_scope_end(s);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* A constant holding "[[[[..." 2400 deep: the parser recursed once per '['
 * with a 256-entry list on the stack each time, and overflowed the stack.
 * Nested lists are now refused before recursing. */
Test(fuzz_regressions, deeply_nested_list_in_graph_text_is_a_parse_error)
{
    size_t n;
    unsigned char *text = read_all("fuzz/regressions/graph_parse/deeply_nested_list_in_a_constant.txt", &n);
    text[n] = 0;
    cr_assert_null(tj_graph_parse((const char *)text));
    free(text);
    cr_assert_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
    cr_assert(strstr(tj_last_error(), "nested lists are not supported"), "%s", tj_last_error());
}

/* safetensors and IDX files: round trips, malformed and truncated input. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "models/fashion_mnist.h"
#include "models/idx.h"
#include "models/models.h"
#include "alloc_counter.h"
#include "tjit/tjit.h"

static char *tmp_path(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/tjit_test_%d_%s", (int)getpid(), name);
    return path;
}

Test(safetensors, round_trip_keeps_names_dtypes_shapes_and_bits)
{
    float f[6] = {1.5f, -2.0f, 0.0f, -0.0f, 3.25f, 1e-30f};
    double d[2] = {0.1, -1e300};
    int64_t i[3] = {INT64_MAX, -1, 0};
    unsigned char b[4] = {1, 0, 0, 1};
    tj_tensor *t[4] = {tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 3}, f),
                       tj_tensor_from_data(TJ_FLOAT64, 1, (int64_t[]){2}, d),
                       tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){3}, i),
                       tj_tensor_from_data(TJ_BOOL, 2, (int64_t[]){2, 2}, b)};
    const char *names[4] = {"fc1.weight", "x", "idx", "mask"};
    const char *path = tmp_path("rt.safetensors");
    cr_assert_eq(tj_safetensors_save(path, names, t, 4), TJ_OK, "%s", tj_last_error());
    tj_safetensors *s = tj_safetensors_load(path);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_eq(tj_safetensors_count(s), 4);
    for (int k = 0; k < 4; k++) {
        tj_tensor *g = tj_safetensors_get(s, names[k]);
        cr_assert_not_null(g, "%s", names[k]);
        cr_expect_eq(tj_tensor_dtype(g), tj_tensor_dtype(t[k]));
        cr_expect_eq(tj_tensor_numel(g), tj_tensor_numel(t[k]));
        cr_expect_eq(memcmp(tj_tensor_data(g), tj_tensor_data(t[k]), (size_t)tj_tensor_numel(g) * tj_dtype_size(tj_tensor_dtype(g))), 0);
    }
    cr_expect_null(tj_safetensors_get(s, "nope"));
    cr_expect_eq(tj_last_status(), TJ_ERR_NOT_FOUND);
    tj_safetensors_free(s);
    remove(path);
    for (int k = 0; k < 4; k++) tj_tensor_release(t[k]);
}

/* A file from an 8-byte length and a header text, then `data` bytes. */
static tj_safetensors *load_raw(const char *header, size_t data_bytes, int64_t declared_len)
{
    size_t hl = strlen(header);
    size_t n = 8 + hl + data_bytes;
    unsigned char *buf = calloc(1, n);
    uint64_t len = declared_len >= 0 ? (uint64_t)declared_len : hl;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(len >> (8 * i));
    memcpy(buf + 8, header, hl);
    tj_safetensors *s = tj_safetensors_load_buffer(buf, n);
    free(buf);
    return s;
}

Test(safetensors, malformed_files_are_rejected_with_a_reason)
{
    static const struct {
        const char *header;
        size_t data;
        int64_t len;
        tj_status status;
        const char *needle;
    } bad[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, -1, TJ_ERR_PARSE, "outside"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, -1, TJ_ERR_PARSE, "needs"},
        {"{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, -1, TJ_ERR_UNSUPPORTED, "F8_E4M3"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, -1, TJ_ERR_PARSE, "shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}", 8, -1, TJ_ERR_PARSE, "overlap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, -1, TJ_ERR_PARSE, "data_offsets"},
        {"[1, 2]", 0, -1, TJ_ERR_PARSE, "not an object"},
        {"{\"a\":", 0, -1, TJ_ERR_PARSE, "JSON"},
        {"{}", 0, 1 << 20, TJ_ERR_PARSE, "past the end"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904, 4],\"data_offsets\":[0,4]}}", 4, -1, TJ_ERR_OVERFLOW, "overflows"},
        /* 2**70: said "header is not a JSON object" */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1180591620717411303424],\"data_offsets\":[0,4]}}", 4, -1, TJ_ERR_PARSE,
         "header holds a number out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tj_safetensors *s = load_raw(bad[i].header, bad[i].data, bad[i].len);
        cr_expect_null(s, "case %zu loaded", i);
        tj_safetensors_free(s);
        cr_expect_eq(tj_last_status(), bad[i].status, "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), bad[i].needle) != NULL, "case %zu: '%s' lacks '%s'", i, tj_last_error(), bad[i].needle);
    }
    cr_expect_null(tj_safetensors_load_buffer("1234", 4));
    cr_expect_null(tj_safetensors_load("/nonexistent/file.safetensors"));
    cr_expect_eq(tj_last_status(), TJ_ERR_IO);
}

Test(safetensors, metadata_round_trips_and_bad_entries_are_refused, .init = count_allocations)
{
    int64_t base = live_allocations();
    tj_tensor *a = tj_zeros((int64_t[]){2}, 1, TJ_FLOAT32);
    const char *path = tmp_path("meta.safetensors");
    const char *keys[] = {"epoch", "note", "empty"}, *values[] = {"12", "caf\xc3\xa9 \"quoted\"", ""};
    cr_assert_eq(tj_safetensors_save_metadata(path, (const char *[]){"a"}, &a, 1, keys, values, 3), TJ_OK, "%s",
                 tj_last_error());
    tj_safetensors *f = tj_safetensors_load(path);
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_expect_eq(tj_safetensors_count(f), 1);
    for (int i = 0; i < 3; i++) cr_expect_str_eq(tj_safetensors_metadata(f, keys[i]), values[i]);
    cr_expect_null(tj_safetensors_metadata(f, "nope"));
    cr_expect_eq(tj_last_status(), TJ_ERR_NOT_FOUND);
    cr_expect(strstr(tj_last_error(), "no __metadata__ entry 'nope'"), "%s", tj_last_error());
    cr_expect_null(tj_safetensors_metadata(NULL, "epoch"));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_null(tj_safetensors_metadata(f, NULL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_safetensors_metadata: NULL key"), "%s", tj_last_error());
    tj_safetensors_free(f);
    /* a file without metadata (tj_safetensors_save) answers no key */
    cr_assert_eq(tj_safetensors_save(path, (const char *[]){"a"}, &a, 1), TJ_OK, "%s", tj_last_error());
    f = tj_safetensors_load(path);
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_expect_null(tj_safetensors_metadata(f, "epoch"));
    tj_safetensors_free(f);
    static const struct {
        const char *keys[2], *values[2];
        int n;
        const char *needle;
    } bad[] = {
        {{"k", "k"}, {"1", "2"}, 2, "metadata entry 1 ('k') is a duplicate"},
        {{NULL}, {"1"}, 1, "metadata entry 0 ('?') is NULL"},
        {{"k"}, {NULL}, 1, "metadata entry 0 ('k') is NULL"},
        {{"k"}, {"\xff"}, 1, "metadata entry 0 ('k') is not UTF-8"},
        {{"\xc0\xaf"}, {"v"}, 1, "metadata entry 0 ('?') is not UTF-8"},
        {{"k"}, {"v"}, -1, "negative metadata count -1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(tj_safetensors_save_metadata(path, (const char *[]){"a"}, &a, 1, bad[i].keys, bad[i].values, bad[i].n),
                     TJ_ERR_INVALID_ARGUMENT, "case %zu", i);
        cr_expect(strstr(tj_last_error(), bad[i].needle), "case %zu: '%s' lacks '%s'", i, tj_last_error(), bad[i].needle);
    }
    cr_expect_eq(tj_safetensors_save_metadata(path, (const char *[]){"a"}, &a, 1, NULL, NULL, 1), TJ_ERR_INVALID_ARGUMENT);
    /* with metadata too, a tensor cannot take its key */
    cr_expect_eq(tj_safetensors_save_metadata(path, (const char *[]){"__metadata__"}, &a, 1, keys, values, 1),
                 TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "('__metadata__') has the name the metadata takes"), "%s", tj_last_error());
    /* the refused saves left the file as it was */
    f = tj_safetensors_load(path);
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_expect_null(tj_safetensors_metadata(f, "k"));
    tj_safetensors_free(f);
    remove(path);
    tj_tensor_release(a);
    cr_expect_eq(live_allocations(), base);
}

/* Hostile files the format's reference reader (huggingface/safetensors:
 * README "Duplicate keys are disallowed", __metadata__ a text-to-text map,
 * validate(): sorted by offsets the tensors tile the data, else
 * InvalidOffset / MetadataIncompleteBuffer) refuses. */
#define T4(name, b, e) "\"" name "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" #b "," #e "]}"

Test(safetensors, duplicate_keys_bad_metadata_gaps_and_trailing_bytes_are_refused)
{
    static const struct {
        const char *header;
        size_t data;
        const char *needle;
    } bad[] = {
        {"{" T4("a", 0, 4) "," T4("a", 4, 8) "}", 8, "header names a key twice (duplicate object key near '\"a\"'"},
        {"{\"__metadata__\":{\"format\":\"pt\",\"step\":3}," T4("a", 0, 4) "}", 4,
         "__metadata__ entry 'step' is not a string"},
        {"{\"__metadata__\":[\"pt\"]," T4("a", 0, 4) "}", 4, "__metadata__ is not an object of strings"},
        {"{" T4("a", 0, 4) "," T4("b", 8, 12) "}", 12, "4 unused data bytes [4, 8) before tensor 'b'"},
        {"{" T4("a", 4, 8) "}", 8, "4 unused data bytes [0, 4) before tensor 'a'"},
        {"{" T4("a", 0, 4) "}", 6, "2 trailing bytes [4, 6) after the last tensor's data"},
        {"{}", 3, "3 trailing bytes [0, 3)"},
        {"{" T4("a", 0, 4) "," T4("b", 0, 4) "}", 4, "tensor 'b' (data bytes [0, 4)) overlaps tensor 'a'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tj_safetensors *s = load_raw(bad[i].header, bad[i].data, -1);
        cr_expect_null(s, "case %zu loaded", i);
        tj_safetensors_free(s);
        cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), bad[i].needle) != NULL, "case %zu: '%s' lacks '%s'", i, tj_last_error(),
                  bad[i].needle);
    }
    /* accepted: string metadata, an empty tensor at the offset of another */
    tj_safetensors *s = load_raw("{\"__metadata__\":{\"format\":\"pt\"},\"e\":{\"dtype\":\"F32\",\"shape\":[0],"
                                 "\"data_offsets\":[0,0]}," T4("a", 0, 4) "}", 4, -1);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_eq(tj_safetensors_count(s), 2);
    cr_expect_str_eq(tj_safetensors_metadata(s, "format"), "pt");
    tj_safetensors_free(s);
    /* from a file, the message names it */
    const char *path = tmp_path("gap.safetensors");
    const char header[] = "{" T4("a", 0, 4) "}";
    FILE *f = fopen(path, "wb");
    unsigned char len8[8] = {(unsigned char)(sizeof header - 1)};
    fwrite(len8, 1, 8, f);
    fwrite(header, 1, sizeof header - 1, f);
    fwrite("\0\0\0\0\1", 1, 5, f);
    fclose(f);
    cr_expect_null(tj_safetensors_load(path));
    char want[512];
    snprintf(want, sizeof want, "tj_safetensors_load: '%s': 1 trailing byte [4, 5)", path);
    cr_expect(strstr(tj_last_error(), want) != NULL, "'%s' lacks '%s'", tj_last_error(), want);
    remove(path);
}

static void write_gz(const char *path, const unsigned char *bytes, size_t n)
{
    gzFile f = gzopen(path, "wb");
    gzwrite(f, bytes, (unsigned)n);
    gzclose(f);
}

Test(idx, reads_a_gzipped_file_and_rejects_truncated_or_corrupt_ones)
{
    unsigned char good[4 + 8 + 6] = {0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 250, 251, 255};
    const char *path = tmp_path("ok.idx.gz");
    write_gz(path, good, sizeof good);
    tj_tensor *t = idx_load_u8(path);
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(t), 2);
    cr_expect_eq(tj_tensor_size(t, 1), 3);
    cr_expect_eq(tj_tensor_item_at(t, 5), 255);
    tj_tensor_release(t);

    write_gz(path, good, sizeof good - 1);
    cr_expect_null(idx_load_u8(path));
    cr_expect(strstr(tj_last_error(), "truncated") != NULL, "%s", tj_last_error());

    unsigned char bad_magic[8] = {0, 0, 9, 1, 0, 0, 0, 0};
    write_gz(path, bad_magic, sizeof bad_magic);
    cr_expect_null(idx_load_u8(path));
    cr_expect(strstr(tj_last_error(), "magic") != NULL, "%s", tj_last_error());

    FILE *f = fopen(path, "wb"); /* a gzip header followed by garbage */
    fwrite("\x1f\x8b\x08\x00garbage-garbage", 1, 20, f);
    fclose(f);
    cr_expect_null(idx_load_u8(path));
    cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
    remove(path);

    cr_expect_null(idx_load_u8("/nonexistent.idx.gz"));
    cr_expect_eq(tj_last_status(), TJ_ERR_IO);
}

/* What a failed read says: a directory is an I/O error naming the reason
 * (it said "bad magic"), a gzip stream whose data or checksum is damaged is
 * corrupt with zlib's reason (it said "bad magic", or "truncated" when the
 * damage came after the header), a stream cut short is truncated, and an
 * empty file is truncated in its header. */
Test(idx, a_failed_read_names_its_reason)
{
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/tjit_test_%d_idx_dir", (int)getpid());
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_expect_null(idx_load_u8(dir));
    cr_expect_eq(tj_last_status(), TJ_ERR_IO, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "cannot read") && strstr(tj_last_error(), "Is a directory"), "%s",
              tj_last_error());
    rmdir(dir);

    /* 2 x 300 bytes, compressed; then the stored CRC-32 (the trailer's first
     * 4 bytes) or one byte of the deflate data damaged */
    unsigned char good[4 + 8 + 600] = {0, 0, 8, 2, 0, 0, 1, 44, 0, 0, 0, 2};
    for (int i = 12; i < (int)sizeof good; i++) good[i] = (unsigned char)(i * 7);
    const char *path = tmp_path("damaged.idx.gz");
    write_gz(path, good, sizeof good);
    FILE *f = fopen(path, "rb");
    unsigned char gz[2048];
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    cr_assert(n > 30 && n < sizeof gz);
    const struct { size_t at; const char *reason; } damage[2] = {{n - 8, "incorrect data check"}, {n / 2, ""}};
    for (int k = 0; k < 2; k++) {
        gz[damage[k].at] ^= 0xff;
        f = fopen(path, "wb");
        fwrite(gz, 1, n, f);
        fclose(f);
        gz[damage[k].at] ^= 0xff;
        cr_expect_null(idx_load_u8(path));
        cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
        cr_expect(strstr(tj_last_error(), "is corrupt (gzip: ") && strstr(tj_last_error(), damage[k].reason) &&
                      !strstr(tj_last_error(), "gzip: /tmp"), "%s",
                  tj_last_error());
    }

    /* a gzip stream cut short is truncated, not corrupt */
    f = fopen(path, "wb");
    fwrite(gz, 1, n / 2, f);
    fclose(f);
    cr_expect_null(idx_load_u8(path));
    cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "is truncated: expected 600 data bytes"), "%s", tj_last_error());

    f = fopen(path, "wb");
    fclose(f);
    cr_expect_null(idx_load_u8(path));
    cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "is truncated in its header"), "%s", tj_last_error());
    remove(path);
}

Test(idx, a_fashion_mnist_folder_without_images_is_refused)
{
    /* header-only files: 0 images of 28 x 28, 0 labels. Before the fix they
     * loaded, and `tjit train` / `tjit eval` printed "test accuracy: -nan"
     * and exited 0. */
    const unsigned char images[4 + 12] = {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 28};
    const unsigned char labels[4 + 4] = {0, 0, 8, 1, 0, 0, 0, 0};
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "/tmp/tjit_test_%d_empty_fmnist", (int)getpid());
    cr_assert_eq(mkdir(dir, 0700), 0);
    const char *prefixes[2] = {"train", "t10k"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefixes[i]);
        write_gz(path, images, sizeof images);
        snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefixes[i]);
        write_gz(path, labels, sizeof labels);
    }
    for (int train = 0; train < 2; train++) {
        fashion_mnist d;
        cr_expect_eq(fashion_mnist_load(dir, train, &d), TJ_ERR_PARSE, "%s", tj_last_error());
        cr_expect(strstr(tj_last_error(), "no images") != NULL, "%s", tj_last_error());
        cr_expect_null(d.images);
        cr_expect_eq(d.n, 0);
        tj_clear_error();
    }
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefixes[i]);
        remove(path);
        snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefixes[i]);
        remove(path);
    }
    rmdir(dir);
}

/* Writes dir/PREFIX-images-idx3-ubyte.gz with n_images zero images of
 * 28 x 28 and dir/PREFIX-labels-idx1-ubyte.gz with n_labels labels 0. */
static void write_fmnist_split(const char *dir, const char *prefix, unsigned char n_images, unsigned char n_labels)
{
    unsigned char images[16 + 2 * 784] = {0, 0, 8, 3, 0, 0, 0, n_images, 0, 0, 0, 28, 0, 0, 0, 28};
    unsigned char labels[8 + 2] = {0, 0, 8, 1, 0, 0, 0, n_labels};
    char path[300];
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    write_gz(path, images, 16 + (size_t)n_images * 784);
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    write_gz(path, labels, 8 + (size_t)n_labels);
}

/* `tjit train` loaded the training split, then on a bad test split exited
 * without freeing it (AddressSanitizer: 200 MB leaked), and the error did
 * not say which shapes it found. */
Test(idx, a_bad_test_split_leaves_nothing_loaded_and_names_the_shapes, .init = count_allocations)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "/tmp/tjit_test_%d_bad_t10k", (int)getpid());
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_fmnist_split(dir, "train", 2, 2);
    write_fmnist_split(dir, "t10k", 1, 2);
    int64_t before = live_allocations();
    fashion_mnist train, test;
    cr_expect_eq(fashion_mnist_load_splits(dir, &train, &test), TJ_ERR_PARSE);
    cr_expect(strstr(tj_last_error(), "t10k-images-idx3-ubyte.gz holds [1, 28, 28], t10k-labels-idx1-ubyte.gz [2]"),
              "%s", tj_last_error());
    cr_expect_null(train.images);
    cr_expect_null(test.images);
    cr_expect_eq(live_allocations(), before);
    tj_clear_error();
    write_fmnist_split(dir, "t10k", 1, 1);
    cr_assert_eq(fashion_mnist_load_splits(dir, &train, &test), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(train.n, 2);
    cr_expect_eq(test.n, 1);
    fashion_mnist_free(&train);
    fashion_mnist_free(&test);
    const char *prefixes[2] = {"train", "t10k"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefixes[i]);
        remove(path);
        snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefixes[i]);
        remove(path);
    }
    rmdir(dir);
}

Test(models, parameters_round_trip_and_a_mismatched_file_changes_nothing)
{
    model m, other;
    cr_assert_eq(model_create(model_find("mlp"), 0, &m), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(m.n_params, 6);
    cr_expect_str_eq(m.names[0], "fc1.weight");
    /* PyTorch's default Linear init: |w| <= 1/sqrt(fan_in) */
    for (int64_t i = 0; i < tj_tensor_numel(m.params[0]); i += 997)
        cr_expect_leq(tj_tensor_item_at(m.params[0], i) * tj_tensor_item_at(m.params[0], i), 1.0 / 784.0);
    const char *path = tmp_path("mlp.safetensors");
    cr_assert_eq(model_save(&m, path), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(model_create(model_find("mlp"), 1, &other), TJ_OK);
    cr_expect_neq(tj_tensor_item_at(other.params[0], 0), tj_tensor_item_at(m.params[0], 0));
    cr_assert_eq(model_load(&other, path), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(other.params[0], 0), tj_tensor_item_at(m.params[0], 0));
    model cnn;
    cr_assert_eq(model_create(model_find("cnn"), 0, &cnn), TJ_OK);
    double before = tj_tensor_item_at(cnn.params[0], 0);
    cr_expect_neq(model_load(&cnn, path), TJ_OK);
    cr_expect_eq(tj_tensor_item_at(cnn.params[0], 0), before);
    remove(path);
    model_free(&cnn);
    model_free(&other);
    model_free(&m);
}

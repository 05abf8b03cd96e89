/* A failed read or write says which function, which file (where it has a
 * path) and why: errno's text, or how many bytes a short file had. The
 * writers to a FILE* flush it, so a full disk (/dev/full: ENOSPC at the
 * flush of a buffered stream) is an error of the call, not of a later
 * fclose the caller may not check. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc_counter.h"
#include "runtime/internal.h"
#include "tjit/tjit.h"

TestSuite(io_errors, .init = count_allocations);

/* A fresh directory of this test's own (Criterion runs each test in its
 * own process), and `name` inside it. */
static char dir[64];
static char *temp_file(const char *name)
{
    static char path[128];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/tjit_io_XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static void expect_error(tj_status st, const char *want)
{
    cr_expect_eq(st, TJ_ERR_IO, "status %d", st);
    cr_expect_str_eq(tj_last_error(), want);
}

Test(io_errors, read_exact_of_a_truncated_file_says_how_many_bytes_it_had)
{
    char *path = temp_file("short.bin");
    write_bytes(path, "12345", 5);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    char buf[8] = {0};
    char want[256];
    snprintf(want, sizeof want, "tj_test_read: cannot read '%s': unexpected end of file after 5 of 8 bytes", path);
    expect_error(tj_read_exact(f, buf, 8, "tj_test_read", path), want);
    cr_expect_eq(memcmp(buf, "12345", 5), 0, "the bytes there were are read");
    /* at the end already, without a path */
    expect_error(tj_read_exact(f, buf, 3, "tj_test_read", NULL),
                 "tj_test_read: read failed: unexpected end of file after 0 of 3 bytes");
    fclose(f);
    remove(path);
    rmdir(dir);
}

Test(io_errors, read_exact_of_a_whole_file_succeeds)
{
    char *path = temp_file("whole.bin");
    write_bytes(path, "12345", 5);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    char buf[5];
    cr_expect_eq(tj_read_exact(f, buf, 5, "tj_test_read", path), TJ_OK);
    cr_expect_eq(memcmp(buf, "12345", 5), 0);
    fclose(f);
    remove(path);
    rmdir(dir);
}

Test(io_errors, read_exact_from_a_write_only_stream_gives_errno_reason)
{
    char *path = temp_file("wo.bin");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    char buf[4];
    char want[256];
    snprintf(want, sizeof want, "tj_test_read: cannot read '%s': Bad file descriptor", path);
    expect_error(tj_read_exact(f, buf, 4, "tj_test_read", path), want);
    fclose(f);
    remove(path);
    rmdir(dir);
}

Test(io_errors, check_written_finds_a_full_disk_at_the_flush)
{
    FILE *f = fopen("/dev/full", "w");
    cr_assert_not_null(f);
    cr_assert_gt(fputs("fits in the buffer\n", f), 0, "a buffered write succeeds until the flush");
    cr_assert_eq(ferror(f), 0);
    expect_error(tj_check_written(f, "tj_test_write", "/dev/full"),
                 "tj_test_write: cannot write '/dev/full': No space left on device");
    fclose(f);
}

Test(io_errors, check_written_of_a_good_file_is_ok_and_the_bytes_are_there)
{
    char *path = temp_file("good.txt");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("abc", f);
    cr_expect_eq(tj_check_written(f, "tj_test_write", path), TJ_OK);
    char buf[4] = {0};
    FILE *r = fopen(path, "rb");
    cr_assert_not_null(r);
    cr_expect_eq(fread(buf, 1, 3, r), 3, "flushed before the close");
    cr_expect_str_eq(buf, "abc");
    fclose(r);
    fclose(f);
    remove(path);
    rmdir(dir);
}

/* ---- every public writer to a FILE*, on a buffered /dev/full ---- */

static const char graph_text[] = "graph(%arg0_1 : f32[2, 3]):\n"
                                 "    %relu = aten.relu.default(%arg0_1)\n"
                                 "    %mul = aten.mul.Tensor(%relu, %arg0_1)\n"
                                 "    return (%mul,)\n";

/* Runs write(obj, f) on a fresh buffered stream on /dev/full; expects
 * "<who>: write failed: No space left on device" and no block left behind. */
static void expect_full_disk(tj_status (*write)(const void *obj, FILE *f), const void *obj, const char *who)
{
    int64_t live = live_allocations();
    FILE *f = fopen("/dev/full", "w");
    cr_assert_not_null(f);
    char want[128];
    snprintf(want, sizeof want, "%s: write failed: No space left on device", who);
    tj_clear_error();
    expect_error(write(obj, f), want);
    fclose(f);
    cr_expect_eq(live_allocations(), live, "%s: %lld blocks leaked", who, (long long)(live_allocations() - live));
}

static tj_status w_tensor(const void *o, FILE *f) { return tj_tensor_print(o, f); }
static tj_status w_graph(const void *o, FILE *f) { return tj_graph_print(o, f); }
static tj_status w_dot(const void *o, FILE *f) { return tj_graph_write_dot(o, f); }
static tj_status w_json(const void *o, FILE *f) { return tj_graph_write_json(o, f); }
static tj_status w_memory(const void *o, FILE *f) { return tj_plan_print_memory(o, f); }
static tj_status w_profile(const void *o, FILE *f) { return tj_plan_profile_print(o, f); }
static tj_status w_decomps(const void *o, FILE *f) { return tj_decomp_table_print(o, f); }

Test(io_errors, every_writer_to_a_file_reports_a_full_disk_by_name_and_reason)
{
    tj_tensor *t = tj_zeros((int64_t[]){2, 3}, 2, TJ_FLOAT32);
    tj_graph *g = tj_graph_parse(graph_text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_plan_set_profiling(p, true);
    tj_tensor *out = NULL;
    cr_assert_eq(tj_plan_run(p, &t, 1, &out), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *d = tj_core_decompositions();
    cr_assert_not_null(d);

    expect_full_disk(w_tensor, t, "tj_tensor_print");
    expect_full_disk(w_graph, g, "tj_graph_print");
    expect_full_disk(w_dot, g, "tj_graph_write_dot");
    expect_full_disk(w_json, g, "tj_graph_write_json");
    expect_full_disk(w_memory, p, "tj_plan_print_memory");
    expect_full_disk(w_profile, p, "tj_plan_profile_print");
    expect_full_disk(w_decomps, d, "tj_decomp_table_print");

    tj_decomp_table_free(d);
    tj_tensor_release(out);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_tensor_release(t);
}

/* ---- saving to what is not a plain file ---- */

/* A save to a FIFO writes into it, and one through a symbolic link replaces
 * the file the link names and keeps the link: renaming the temporary over
 * the path itself put a regular file in their place (as root,
 * `tjit profile gpt --trace /dev/full` replaced the device). */
Test(io_errors, a_save_to_a_fifo_writes_into_it_and_one_through_a_link_keeps_the_link)
{
    tj_tensor *t = tj_full((int64_t[]){2}, 1, tj_v_float(1.5), TJ_FLOAT32);
    char fifo[128], real[128], link[128];
    snprintf(fifo, sizeof fifo, "%s", temp_file("pipe"));
    snprintf(real, sizeof real, "%s", temp_file("real.npy"));
    snprintf(link, sizeof link, "%s", temp_file("link.npy"));
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so that the save's open does not wait */
    cr_assert_geq(rd, 0);
    cr_expect_eq(tj_npy_save(fifo, t), TJ_OK, "%s", tj_last_error());
    struct stat sb;
    cr_expect(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO is still one");
    char buf[256];
    ssize_t n = read(rd, buf, sizeof buf);
    cr_expect_eq(n, 136, "a header of 128 bytes and two floats");
    cr_expect(n >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0);
    close(rd);

    write_bytes(real, "old", 3);
    cr_assert_eq(symlink(real, link), 0);
    cr_expect_eq(tj_npy_save(link, t), TJ_OK, "%s", tj_last_error());
    cr_expect(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "the link is still one");
    tj_tensor *back = tj_npy_load(real);
    cr_assert_not_null(back, "%s", tj_last_error());
    cr_expect_eq(back->numel, 2);
    cr_expect_eq(((const float *)tj_tensor_ptr(back))[1], 1.5f);
    tj_tensor_release(back);
    /* a dangling link (relative target): the save makes the file it names */
    remove(link), remove(real);
    const char *base = strrchr(real, '/') + 1;
    cr_assert_eq(symlink(base, link), 0);
    cr_expect_eq(tj_npy_save(link, t), TJ_OK, "%s", tj_last_error());
    cr_expect(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "the dangling link is still one");
    back = tj_npy_load(real);
    cr_assert_not_null(back, "the file the link names: %s", tj_last_error());
    cr_expect_eq(((const float *)tj_tensor_ptr(back))[0], 1.5f);
    tj_tensor_release(back);
    tj_tensor_release(t);
    remove(fifo), remove(link), remove(real);
    rmdir(dir);
}

/* A pipe holding `bytes`, its writing end closed, by a path that opens it. */
static const char *pipe_holding(const char *bytes, size_t n)
{
    static char path[64];
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(write(fds[1], bytes, n), (ssize_t)n);
    close(fds[1]);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    return path;
}

Test(io_errors, read_text_file_takes_up_to_its_limit_from_a_file_and_a_pipe)
{
    const char sixteen[] = "0123456789abcdef";
    const char *paths[] = {temp_file("t16"), NULL};
    write_bytes(paths[0], sixteen, 16);
    paths[1] = pipe_holding(sixteen, 16);
    for (int i = 0; i < 2; i++) {
        size_t n = 99;
        char *text = tj_read_text_file(paths[i], "who", 16, &n);
        cr_assert_not_null(text, "%s: %s", paths[i], tj_last_error());
        cr_expect_eq(n, 16);
        cr_expect_str_eq(text, sixteen);
        tj_free_file(text, n);
    }
}

Test(io_errors, read_text_file_refuses_one_byte_past_its_limit_without_trusting_st_size)
{
    const char *paths[] = {temp_file("t17"), pipe_holding("0123456789abcdefg", 17)};
    write_bytes(paths[0], "0123456789abcdefg", 17);
    char want[256];
    for (int i = 0; i < 2; i++) {
        size_t n = 99;
        cr_assert_null(tj_read_text_file(paths[i], "who", 16, &n));
        cr_expect_eq(n, 0);
        cr_expect_eq(tj_last_status(), TJ_ERR_IO);
        snprintf(want, sizeof want, "who: cannot read '%s': larger than 16 bytes, the most a text file may hold", paths[i]);
        cr_expect_str_eq(tj_last_error(), want);
    }
}

Test(io_errors, read_text_file_names_the_place_of_a_nul_byte)
{
    const char *path = temp_file("nul");
    write_bytes(path, "ab\ncd\nef\0gh", 11);
    size_t n = 99;
    cr_assert_null(tj_read_text_file(path, "who", 1 << 20, &n));
    cr_expect_eq(tj_last_status(), TJ_ERR_PARSE);
    char want[256];
    snprintf(want, sizeof want, "who: '%s': line 3, column 3: a NUL byte (byte offset 8) in text", path);
    cr_expect_str_eq(tj_last_error(), want);
}

Test(io_errors, read_text_file_of_a_directory_or_a_missing_file_says_why)
{
    size_t n;
    char want[256];
    cr_assert_null(tj_read_text_file("/tmp", "who", 1 << 20, &n));
    cr_expect_str_eq(tj_last_error(), "who: cannot read '/tmp': Is a directory");
    const char *missing = temp_file("missing");
    cr_assert_null(tj_read_text_file(missing, "who", 1 << 20, &n));
    snprintf(want, sizeof want, "who: cannot read '%s': No such file or directory", missing);
    cr_expect_str_eq(tj_last_error(), want);
}

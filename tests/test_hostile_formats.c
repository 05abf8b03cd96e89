/* Hostile files (breaker7): safetensors whose fields lie. Each load must
 * fail with TJ_ERR_PARSE and a message that says what is wrong, and leak
 * nothing. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "hostile.h"

TestSuite(hostile_formats, .init = count_allocations);

#define SAFETENSORS_MAX_HEADER ((uint64_t)100 << 20) /* the reference reader's limit */

/* A header longer than the format allows, in a file that holds it all: the
 * message said "runs past the end of the file", which it does not. */
Test(hostile_formats, safetensors_header_over_the_limit_says_so)
{
    int64_t base = live_allocations();
    uint64_t hlen = SAFETENSORS_MAX_HEADER + 1;
    size_t n = 8 + (size_t)hlen;
    unsigned char *buf = malloc(n); /* only its first 8 bytes are read: the pages stay untouched */
    cr_assert_not_null(buf);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(hlen >> (8 * i));
    cr_expect_null(tj_safetensors_load_buffer(buf, n));
    EXPECT_ERROR(TJ_ERR_PARSE, "tj_safetensors_load: header length 104857601 is larger than the 104857600 bytes allowed");
    /* one that does run past the end still says that */
    hlen = 64;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(hlen >> (8 * i));
    cr_expect_null(tj_safetensors_load_buffer(buf, 8 + 63));
    EXPECT_ERROR(TJ_ERR_PARSE, "header length 64 runs past the end of the file (71 bytes)");
    free(buf);
    cr_expect_eq(live_allocations(), base);
}

/* Graph text: a UTF-8 byte order mark (as some editors save it) is skipped;
 * an integer past int64 says so rather than "expected an integer". */
Test(hostile_formats, graph_text_with_a_byte_order_mark_and_an_integer_past_int64)
{
    const char *body = "graph(%x : f32[2]):\n    %neg = aten.neg.default(%x)\n    return (%neg,)\n";
    char text[256];
    snprintf(text, sizeof text, "\xEF\xBB\xBF%s", body);
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *printed = tj_graph_to_string(g);
    cr_expect_str_eq(printed, body);
    free(printed);
    tj_graph_free(g);
    cr_expect_null(tj_graph_parse("graph(%x : f32[2]):\n    %m = aten.mul.Scalar(%x, 9223372036854775808)\n"
                                  "    return (%m,)\n"));
    EXPECT_ERROR(TJ_ERR_PARSE, "line 2, column 30: integer out of the int64 range");
}

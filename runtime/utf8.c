/* Well-formed UTF-8 (RFC 3629), as JSON strings must be (internal.h). */
#include "internal.h"

int tj_utf8_char_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned c = u[0], lo = 0x80, hi = 0xbf;
    int extra;
    if (c < 0x80) return c ? 1 : 0;
    if (c >= 0xc2 && c <= 0xdf) extra = 1;
    else if (c >= 0xe0 && c <= 0xef) extra = 2, lo = c == 0xe0 ? 0xa0 : lo, hi = c == 0xed ? 0x9f : hi;
    else if (c >= 0xf0 && c <= 0xf4) extra = 3, lo = c == 0xf0 ? 0x90 : lo, hi = c == 0xf4 ? 0x8f : hi;
    else return 0;
    if (u[1] < lo || u[1] > hi) return 0;
    for (int k = 2; k <= extra; k++)
        if ((u[k] & 0xc0) != 0x80) return 0;
    return extra + 1;
}

bool tj_utf8_valid(const char *s)
{
    for (int n; *s; s += n)
        if (!(n = tj_utf8_char_len(s))) return false;
    return true;
}

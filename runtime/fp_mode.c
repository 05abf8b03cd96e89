/* The calling thread's treatment of denormals (tj_set_flush_denormal); the
 * thread pool hands it on to the threads running a kernel's blocks
 * (kernels/parallel.c). */
#include <immintrin.h>
#include <stdalign.h>
#include <string.h>

#include "kernels/fp_control.h"
#include "tjit/core.h"


/* Whether MXCSR takes DAZ: bit 6 of the MXCSR_MASK that FXSAVE stores (0
 * there means the default mask, without DAZ). Setting a bit the mask lacks
 * would fault. */
static bool daz_supported(void)
{
    alignas(16) unsigned char area[512];
    memset(area, 0, sizeof area);
    _fxsave(area);
    unsigned mask;
    memcpy(&mask, area + 28, sizeof mask);
    return mask & TJ_K_FP_DAZ;
}

bool tj_set_flush_denormal(bool on)
{
    if (!daz_supported()) return false;
    unsigned csr = _mm_getcsr();
    _mm_setcsr(on ? csr | TJ_K_FP_DAZ | TJ_K_FP_FTZ : csr & ~(TJ_K_FP_DAZ | TJ_K_FP_FTZ));
    return true;
}

bool tj_get_flush_denormal(void)
{
    return (_mm_getcsr() & (TJ_K_FP_DAZ | TJ_K_FP_FTZ)) == (TJ_K_FP_DAZ | TJ_K_FP_FTZ);
}

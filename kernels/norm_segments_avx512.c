/* AVX-512 build of the float32 segment loops (batch / group norm). */
#include "norm_segments_isa.h"

/* AVX2 + FMA build of the float32 segment loops (batch / group norm). */
#include "norm_segments_isa.h"

/* AVX-512 build of the float32 softmax pieces. */
#include "softmax_isa.h"

/* AVX2 build of the float32 softmax backward row. */
#include "softmax_backward_isa.h"

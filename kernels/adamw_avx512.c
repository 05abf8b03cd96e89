/* AVX-512 build of the float32 AdamW loop. */
#include "adamw_isa.h"

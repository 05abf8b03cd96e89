/* AVX-512 build of the scatter-add runs loop (scatter_runs_isa.h). */
#include "scatter_runs_isa.h"

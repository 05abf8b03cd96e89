/* Kernels and shape functions that the operator table binds, one header per
 * operator family. */
#ifndef TJIT_RUNTIME_OP_KERNELS_H
#define TJIT_RUNTIME_OP_KERNELS_H

#include "internal.h"
#include "op_elementwise.h"
#include "op_reduction.h"
#include "op_view.h"
#include "op_creation.h"
#include "op_linalg.h"
#include "op_nn.h"
#include "op_backward.h"
#include "op_inplace.h"
#include "op_index.h"
#include "op_optim.h"
#include "op_sort.h"
#include "op_tri_repeat.h"
#include "op_diag.h"
#include "op_masked.h"
#include "op_transformer.h"
#include "op_lapack.h"
#include "op_search_select.h"
#include "op_unique.h"
#include "op_random.h"
#include "op_special.h"

#endif

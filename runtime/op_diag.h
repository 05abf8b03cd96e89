/* diag, diag_embed and trace: shape functions and kernels bound in
 * op_view.def (runtime/op_diag.c). */
#ifndef TJIT_RUNTIME_OP_DIAG_H
#define TJIT_RUNTIME_OP_DIAG_H

#include "internal.h"

TJ_OP_DECLARE(diag)
TJ_OP_DECLARE(diag_embed)
TJ_OP_DECLARE(trace)

#endif

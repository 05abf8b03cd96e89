/* tjit: a CPU tensor runtime with a tracing JIT. The one header to include. */
#ifndef TJIT_TJIT_H
#define TJIT_TJIT_H

#include "core.h"
#include "tensor.h"
#include "dispatch.h"
#include "ops.h"
#include "inplace.h"
#include "autograd.h"
#include "optim.h"
#include "graph.h"
#include "plan.h"
#include "jit.h"
#include "decomp.h"
#include "library.h"
#include "safetensors.h"
#include "dlpack.h"

#endif

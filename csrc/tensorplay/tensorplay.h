#pragma once
// The public C++ API in one include: `#include <tensorplay/tensorplay.h>`, link tensorplay::tensorplay
// (docs/cpp.md). Everything is in namespace tp, with PyTorch's names: tensors and their ops,
// autograd, autocast (tp::AutocastGuard), the grad scaler's ops, generators, the profiler; and
// LibTorch's front end over them: tp::nn modules and functional, tp::optim optimizers; and
// safetensors files, which Python reads and writes too.

#include "tensorplay/amp/autocast_state.h"
#include "tensorplay/amp/grad_scaler.h"
#include "tensorplay/autograd/engine.h"
#include "tensorplay/autograd/grad_mode.h"
#include "tensorplay/autograd/variable.h"
#include "tensorplay/core/generator.h"
#include "tensorplay/core/parallel.h"
#include "tensorplay/core/tensor.h"
#include "tensorplay/nn/container.h"
#include "tensorplay/nn/conv.h"
#include "tensorplay/nn/dropout.h"
#include "tensorplay/nn/embedding.h"
#include "tensorplay/nn/functional.h"
#include "tensorplay/nn/init.h"
#include "tensorplay/nn/linear.h"
#include "tensorplay/nn/module.h"
#include "tensorplay/nn/normalization.h"
#include "tensorplay/ops/operators.h"
#include "tensorplay/ops/ops.h"
#include "tensorplay/ops/optim.h"
#include "tensorplay/ops/print.h"
#include "tensorplay/ops/tensor_indexing.h"
#include "tensorplay/optim/adam.h"
#include "tensorplay/optim/sgd.h"
#include "tensorplay/profiler/profiler.h"
#include "tensorplay/serialize/safetensors.h"

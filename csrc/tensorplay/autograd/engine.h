#pragma once
// The backward pass: runs the graph's nodes from the roots towards the leaves, each once all the
// gradients flowing into it have arrived.

#include "tensorplay/autograd/node.h"

namespace tp::autograd {

struct BackwardOptions {
  bool retain_graph = false;
  bool create_graph = false;  // record the backward pass itself, for higher-order gradients
  bool allow_unused = false;
};

// loss.backward() and autograd.backward(): accumulates into the .grad of the leaves (or of
// `inputs` only, when given). grad_roots[i] may be undefined for a one-element root (then 1).
void backward(const TensorList& roots, const TensorList& grad_roots, const BackwardOptions& options,
              const TensorList& inputs = {});

// autograd.grad(): returns the gradients of the roots with respect to `inputs` instead of
// accumulating them; an input the roots do not depend on gives an undefined tensor if
// allow_unused, else an error.
TensorList grad(const TensorList& roots, const TensorList& grad_roots, const TensorList& inputs,
                const BackwardOptions& options);

}  // namespace tp::autograd

// Trains a small MLP in C++ under autocast: the matmuls run in bfloat16, the loss in float32,
// and the float32 weights get float32 gradients. Exits non-zero if the loss does not fall.
//
//   build/dev/autocast_mlp [steps]

#include <cstdio>
#include <cstdlib>

#include <tensorplay/tensorplay.h>

using namespace tp;

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  manual_seed(0);

  // The task: which of 4 clusters a point comes from.
  const int64_t n = 512, features = 16, hidden = 64, classes = 4;
  Tensor centers = mul(randn({classes, features}), 0.4);
  Tensor labels = randint(0, classes, {n});
  Tensor inputs = add(index_select(centers, 0, labels), randn({n, features}));

  auto parameter = [](IntArrayRef shape, double scale) {
    Tensor p = mul(randn(shape), scale);
    p.set_requires_grad(true);
    return p;
  };
  TensorList params = {parameter({hidden, features}, 0.25), parameter({hidden}, 0.0),
                       parameter({classes, hidden}, 0.125), parameter({classes}, 0.0)};
  TensorList momentum(params.size());

  double first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    Tensor loss;
    {
      AutocastGuard autocast(DeviceType::CPU);  // bfloat16 matmuls from here to the end of scope
      Tensor h = relu(linear(inputs, params[0], params[1]));
      Tensor logits = linear(h, params[2], params[3]);  // bfloat16
      loss = cross_entropy(logits, labels);             // float32: losses run in float32
    }
    for (const Tensor& p : params) autograd::set_grad(p, Tensor());  // zero_grad(set_to_none=True)
    loss.backward();                                                 // outside the region, as recommended
    TensorList grads;
    for (const Tensor& p : params) grads.push_back(p.grad());  // float32, like the weights
    optim::sgd_step(params, grads, momentum, {.lr = 0.1, .momentum = 0.9});
    last = loss.item<double>();
    if (step == 0) first = last;
    if (step % 50 == 0 || step == steps - 1) std::printf("step %4d  loss %.4f\n", step, last);
  }
  const bool learned = last < 0.5 * first;
  std::printf("%s: loss %.4f -> %.4f\n", learned ? "ok" : "FAILED", first, last);
  return learned ? 0 : 1;
}

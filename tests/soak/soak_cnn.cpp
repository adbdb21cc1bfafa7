// The demo's CNN (reduced: 8 and 16 channels) trained in C++ for many steps under autocast, so
// that LeakSanitizer can watch a long run: CPython keeps memory until exit, which makes the
// Python soak (soak_cnn.py) useless to it, while this process frees everything it owns. Each step
// is the seed's loop: forward and loss under autocast, backward and SGD with momentum outside it.
// Exits non-zero if the loss does not fall; in a sanitized build, ASan/LSan report any error or
// leak and fail the run.
//
//   build/asan/soak_cnn [steps]    (make soak-asan)

#include <cstdio>
#include <cstdlib>

#include "tensorplay/amp/autocast_state.h"
#include "tensorplay/autograd/variable.h"
#include "tensorplay/ops/ops.h"
#include "tensorplay/ops/optim.h"

using namespace tp;

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10000;
  manual_seed(0);

  // A fixed batch of 16 images, 28x28, whose class is the quadrant holding a bright square.
  const int64_t batch = 16, classes = 4;
  Tensor labels = randint(0, classes, {batch});
  Tensor images = mul(randn({batch, 1, 28, 28}), 0.1);
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t quadrant = select(labels, 0, i).item<int64_t>();
    Tensor square = narrow(narrow(select(images, 0, i), 1, 14 * (quadrant / 2) + 4, 6), 2, 14 * (quadrant % 2) + 4, 6);
    fill_(square, 1.0);
  }

  auto parameter = [](IntArrayRef shape, double scale) {
    Tensor p = mul(randn(shape), scale);
    p.set_requires_grad(true);
    return p;
  };
  TensorList params = {parameter({8, 1, 3, 3}, 0.3),    parameter({8}, 0.0),
                       parameter({16, 8, 3, 3}, 0.1),   parameter({16}, 0.0),
                       parameter({32, 16 * 5 * 5}, 0.05), parameter({32}, 0.0),
                       parameter({classes, 32}, 0.15),  parameter({classes}, 0.0)};
  TensorList momentum(params.size());

  double first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    Tensor loss;
    {
      AutocastGuard autocast(DeviceType::CPU);  // convolutions and linears in bfloat16
      Tensor x = max_pool2d(relu(conv2d(images, params[0], params[1])), {2});  // 13x13
      x = max_pool2d(relu(conv2d(x, params[2], params[3])), {2});              // 5x5
      x = relu(linear(flatten(x, 1), params[4], params[5]));
      loss = cross_entropy(linear(x, params[6], params[7]), labels);  // in float32
    }
    for (const Tensor& p : params) autograd::set_grad(p, Tensor());
    loss.backward();
    TensorList grads;
    for (const Tensor& p : params) grads.push_back(p.grad());
    optim::sgd_step(params, grads, momentum, {.lr = 0.05, .momentum = 0.9});
    last = loss.item<double>();
    if (step == 0) first = last;
    if (step % 1000 == 0 || step == steps - 1) std::printf("step %5d  loss %.4f\n", step, last);
  }
  const bool learned = last < 0.5 * first;
  std::printf("%s: %d steps, loss %.4f -> %.4f\n", learned ? "ok" : "FAILED", steps, first, last);
  return learned ? 0 : 1;
}

// Prints what the C++ front end computes, for tests/python/test_cpp_frontend.py to compare with
// the Python modules and optimizers (tensorplay's and PyTorch's) given the same seed and weights.
//
//   frontend_parity modules      the modules' initial state, outputs and gradients
//   frontend_parity train OPT    an MLP's parameters after 5 steps of OPT (sgd, adam or adamw)
//   frontend_parity save PATH    saves the MLP's initial state dict to PATH (safetensors)
//   frontend_parity load PATH    loads the MLP's state from PATH and prints it and an output
//
// Each tensor is printed as one line: name, then its shape, then its values (float64, %.17g).

#include <tensorplay/tensorplay.h>

#include <cstdio>
#include <cstring>
#include <string>

using namespace tp;

static void print(const std::string& name, const Tensor& t) {
  Tensor values = contiguous(to(t.detach(), ScalarType::Float64));
  std::printf("%s %lld", name.c_str(), static_cast<long long>(t.dim()));
  for (int64_t d = 0; d < t.dim(); ++d) std::printf(" %lld", static_cast<long long>(t.size(d)));
  const double* data = values.data_ptr<double>();
  for (int64_t i = 0; i < values.numel(); ++i) std::printf(" %.17g", data[i]);
  std::printf("\n");
}

static void print_state(const std::string& prefix, const nn::Module& module) {
  for (const auto& [name, t] : module.state_dict()) print(prefix + name, t);
}

static int modules() {
  manual_seed(0);
  nn::Sequential features{nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1)), nn::BatchNorm2d(4), nn::Functional(relu),
                          nn::Functional([](const Tensor& x) { return max_pool2d(x, {2}); })};
  nn::Linear head(4 * 3 * 3, 5);
  nn::LayerNorm norm(nn::LayerNormOptions({5}));
  nn::Embedding embedding(nn::EmbeddingOptions(7, 5).padding_idx(2));
  nn::Dropout dropout(0.5);
  print_state("features.", *features);
  print_state("head.", *head);
  print_state("norm.", *norm);
  print_state("embedding.", *embedding);

  Tensor images = randn({2, 2, 6, 6});
  Tensor ids = tensor({1, 2, 6});  // 2 is the padding row
  Tensor x = flatten(features(images), 1);
  Tensor y = norm(head(x));
  Tensor e = embedding(ids);
  dropout->eval();
  Tensor out = add(sum(mul(y, y)), sum(dropout(e)));
  out.backward();
  print("out", out);
  print("y", y);
  print_state("after.features.", *features);  // running statistics after one training batch
  for (const auto& [name, p] : features->named_parameters()) print("grad.features." + name, p.grad());
  for (const auto& [name, p] : head->named_parameters()) print("grad.head." + name, p.grad());
  for (const auto& [name, p] : norm->named_parameters()) print("grad.norm." + name, p.grad());
  print("grad.embedding.weight", embedding->weight.grad());

  features->eval();
  print("eval", features(images));
  return 0;
}

// Braces: the layers are built (and draw their weights) left to right, as in Python; the order of
// a parenthesised call's arguments is unspecified.
static nn::Sequential mlp() { return nn::Sequential{nn::Linear(4, 8), nn::Functional(tp::tanh), nn::Linear(8, 3)}; }

static int save(const char* path) {
  manual_seed(0);
  save_safetensors(mlp()->state_dict(), path);
  return 0;
}

static int load(const char* path) {
  nn::Sequential model = mlp();
  model->load_state_dict(load_safetensors(path));
  print_state("loaded.", *model);
  print("output", model(ones({2, 4})));
  return 0;
}

static int train(const char* which) {
  manual_seed(0);
  nn::Sequential model = mlp();
  Tensor inputs = randn({16, 4});
  Tensor targets = randint(0, 3, {16});
  print_state("initial.", *model);
  std::unique_ptr<optim::Optimizer> optimizer;
  if (std::strcmp(which, "sgd") == 0)
    optimizer = std::make_unique<optim::SGD>(model->parameters(),
                                             optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-3));
  else if (std::strcmp(which, "adam") == 0)
    optimizer = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(1e-2).betas({0.8, 0.99}));
  else if (std::strcmp(which, "adamw") == 0)
    optimizer = std::make_unique<optim::AdamW>(model->parameters(), optim::AdamWOptions(1e-2).amsgrad(true));
  else
    return 2;
  for (int step = 0; step < 5; ++step) {
    optimizer->zero_grad();
    Tensor loss = cross_entropy(model(inputs), targets);
    loss.backward();
    optimizer->step();
    print("loss." + std::to_string(step), loss);
  }
  print_state("final.", *model);
  return 0;
}

int main(int argc, char** argv) {
  try {
    if (argc == 2 && std::strcmp(argv[1], "modules") == 0) return modules();
    if (argc == 3 && std::strcmp(argv[1], "train") == 0) return train(argv[2]);
    if (argc == 3 && std::strcmp(argv[1], "save") == 0) return save(argv[2]);
    if (argc == 3 && std::strcmp(argv[1], "load") == 0) return load(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: frontend_parity modules | train sgd|adam|adamw | save PATH | load PATH\n");
  return 2;
}

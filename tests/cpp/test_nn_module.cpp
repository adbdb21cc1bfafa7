// tp::nn::Module and tp::optim::Optimizer as a C++ user meets them: registration and the names it
// gives, state_dict and load_state_dict, train/eval, to(dtype), holders, and the errors PyTorch
// raises for the same mistakes. (Values against the Python modules: tests/python/test_cpp_frontend.py.)

#include <gtest/gtest.h>
#include <tensorplay/tensorplay.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace tp;

namespace {

struct NetImpl : nn::Module {
  NetImpl() {
    scale = register_parameter("scale", ones({3}));
    count = register_buffer("count", zeros({1}));
    body = register_module("body", nn::Sequential{nn::Linear(3, 4), nn::Functional(tp::relu), nn::BatchNorm2d(2)});
  }
  Tensor scale, count;
  nn::Sequential body{nullptr};
};
TP_MODULE(Net);

std::vector<std::string> keys(const nn::StateDict& state) {
  std::vector<std::string> out;
  for (const auto& item : state) out.push_back(item.first);
  return out;
}

bool equal(const Tensor& a, const Tensor& b) {
  return std::ranges::equal(a.sizes(), b.sizes()) && all(eq(a, b)).item<bool>();
}

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected an error";
  return ErrorKind::Runtime;
}

}  // namespace

TEST(NnModule, NamesFollowPythonsOrder) {
  Net net;
  EXPECT_EQ(keys(net->state_dict()),
            (std::vector<std::string>{"scale", "count", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias",
                                      "body.2.running_mean", "body.2.running_var", "body.2.num_batches_tracked"}));
  EXPECT_EQ(keys(net->named_parameters()),
            (std::vector<std::string>{"scale", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias"}));
  EXPECT_EQ(keys(net->named_parameters(/*recurse=*/false)), std::vector<std::string>{"scale"});
  EXPECT_EQ(net->buffers().size(), 4u);
  EXPECT_EQ(net->children().size(), 1u);
  EXPECT_EQ(net->name(), "Net");
  EXPECT_EQ(net->body->name(), "Sequential");
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  for (const Tensor& b : net->buffers()) EXPECT_FALSE(b.requires_grad());
}

TEST(NnModule, ABiasFreeLayerHasNoBiasParameter) {
  nn::Linear linear(nn::LinearOptions(3, 2).bias(false));
  EXPECT_FALSE(linear->bias.defined());
  EXPECT_EQ(keys(linear->state_dict()), std::vector<std::string>{"weight"});
  EXPECT_EQ(linear(ones({5, 3})).sizes()[1], 2);
}

TEST(NnModule, RegistrationRejectsBadNames) {
  struct Bad : nn::Module {};
  Bad m;
  m.register_parameter("w", ones({1}));
  EXPECT_EQ(kind_of([&] { m.register_parameter("w", ones({1})); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { m.register_buffer("a.b", ones({1})); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { m.register_parameter("", ones({1})); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { m.register_module("w", nn::Linear(1, 1)); }), ErrorKind::Value);
}

TEST(NnModule, LoadStateDictCopiesIntoTheSameTensors) {
  Net a, b;
  const Tensor weight = b->body->named_parameters()[0].second;
  b->load_state_dict(a->state_dict());
  const auto sa = a->state_dict(), sb = b->state_dict();
  for (size_t i = 0; i < sa.size(); ++i) EXPECT_TRUE(equal(sa[i].second, sb[i].second)) << sa[i].first;
  EXPECT_TRUE(weight.is_same(b->body->named_parameters()[0].second));  // copied in, not replaced
  EXPECT_TRUE(weight.is_leaf());
}

TEST(NnModule, LoadStateDictReportsMissingUnexpectedAndMisshapenKeys) {
  Net net;
  nn::StateDict state = net->state_dict();
  state.erase(state.begin());
  state.emplace_back("extra", ones({1}));
  try {
    net->load_state_dict(state);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Missing key(s) in state_dict: \"scale\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Unexpected key(s) in state_dict: \"extra\""), std::string::npos);
  }
  net->load_state_dict(state, /*strict=*/false);  // the keys that match still load
  nn::StateDict wrong = net->state_dict();
  wrong[0].second = ones({4});
  EXPECT_EQ(kind_of([&] { net->load_state_dict(wrong); }), ErrorKind::Runtime);
}

TEST(NnModule, TrainAndEvalReachEverySubmodule) {
  Net net;
  net->eval();
  EXPECT_FALSE(net->is_training());
  for (const auto& child : net->body->children()) EXPECT_FALSE(child->is_training());
  net->train();
  for (const auto& child : net->body->children()) EXPECT_TRUE(child->is_training());
  nn::Dropout dropout(0.5);
  dropout->eval();
  const Tensor x = ones({100});
  EXPECT_TRUE(equal(dropout(x), x));
}

TEST(NnModule, ToDtypeConvertsFloatingTensorsUnderTheSameHandles) {
  Net net;
  const Tensor scale = net->scale;
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.1));
  net->to(ScalarType::Float64);
  EXPECT_EQ(scale.dtype(), ScalarType::Float64);
  EXPECT_EQ(sgd.parameters()[0].dtype(), ScalarType::Float64);
  EXPECT_TRUE(scale.requires_grad());
  EXPECT_EQ(net->body->state_dict().back().second.dtype(), ScalarType::Int64);  // num_batches_tracked
  EXPECT_EQ(kind_of([&] { net->to(ScalarType::Int32); }), ErrorKind::Type);
}

TEST(NnModule, AnEmptyHolderSaysSo) {
  nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_THROW(empty->reset_parameters(), Error);
}

TEST(NnModule, ZeroGradClearsOrZeroesGradients) {
  nn::Linear linear(2, 1);
  sum(linear(ones({1, 2}))).backward();
  linear->zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(equal(linear->weight.grad(), zeros({1, 2})));
  linear->zero_grad();
  EXPECT_FALSE(linear->weight.grad().defined());
}

TEST(Optim, OptionsAreCheckedAsPythonChecksThem) {
  nn::Linear linear(2, 1);
  EXPECT_EQ(kind_of([&] { optim::SGD(linear->parameters(), optim::SGDOptions(-1)); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { optim::SGD(linear->parameters(), optim::SGDOptions(0.1).nesterov(true)); }),
            ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { optim::Adam(linear->parameters(), optim::AdamOptions().betas({1.0, 0.9})); }),
            ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { optim::Adam({}, optim::AdamOptions()); }), ErrorKind::Value);
  EXPECT_DOUBLE_EQ(optim::AdamWOptions().weight_decay(), 1e-2);
  EXPECT_DOUBLE_EQ(optim::AdamOptions().weight_decay(), 0);
}

TEST(Optim, ParametersWithoutGradientsAreLeftAlone) {
  nn::Linear used(2, 1), unused(2, 1);
  std::vector<Tensor> params = used->parameters();
  for (const Tensor& p : unused->parameters()) params.push_back(p);
  const Tensor before = clone(unused->weight);
  optim::Adam adam(params, optim::AdamOptions(0.1));
  sum(used(ones({1, 2}))).backward();
  const Tensor used_before = clone(used->weight);
  adam.step();
  EXPECT_TRUE(equal(unused->weight, before));
  EXPECT_FALSE(equal(used->weight, used_before));
}

TEST(NnModule, ToDeviceMovesEveryTensorUnderTheSameHandles) {
  Net net;
  const Tensor scale = net->scale;
  net->to(Device(DeviceType::Meta));
  for (const auto& [key, t] : net->state_dict()) EXPECT_TRUE(t.device().is_meta()) << key;
  EXPECT_TRUE(scale.device().is_meta());
  EXPECT_TRUE(scale.requires_grad());
  // As in Python (and PyTorch): a meta tensor has no values to bring back.
  EXPECT_EQ(kind_of([&] { net->to(Device(DeviceType::CPU)); }), ErrorKind::NotImplemented);
}

// The demo CNN of examples/fashion_mnist.py, trained in C++ with the LibTorch-style front end:
// tp::nn modules, tp::optim::Adam, and tp::AutocastGuard around the forward pass (bfloat16
// convolutions and matmuls, float32 loss), as the Python demo trains it.
//
//   fashion_mnist [--data DIR] [--epochs N] [--limit N] [--no-autocast] [--save PATH]
//                 [--expect-accuracy A]
//
// Reads the four IDX files of Fashion-MNIST (gzipped or not) from DIR, by default Debian's
// dataset-fashion-mnist. With --expect-accuracy it exits non-zero when the final test accuracy is
// below A (a fraction): ctest runs it so.

#include <tensorplay/tensorplay.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

using namespace tp;

namespace {

// The training set's pixel mean and standard deviation (of values scaled to [0, 1]).
constexpr double kMean = 0.2860, kStd = 0.3530;

struct NetImpl : nn::Module {
  NetImpl() {
    conv1 = register_module("conv1", nn::Conv2d(1, 32, 3));
    conv2 = register_module("conv2", nn::Conv2d(32, 64, 3));
    fc1 = register_module("fc1", nn::Linear(64 * 5 * 5, 128));
    fc2 = register_module("fc2", nn::Linear(128, 10));
  }

  Tensor forward(Tensor x) {
    x = max_pool2d(relu(conv1(x)), {2});  // 28x28 -> 26 -> 13
    x = max_pool2d(relu(conv2(x)), {2});  // -> 11 -> 5
    return fc2(relu(fc1(flatten(x, 1))));
  }

  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
TP_MODULE(Net);

// One IDX file: big-endian magic and dimensions, then unsigned bytes. Returns the bytes and fills
// dims; gzread reads plain files too.
std::vector<uint8_t> read_idx(const std::string& path, std::vector<int64_t>& dims) {
  std::string file = path;
  if (!std::filesystem::exists(file) && std::filesystem::exists(file + ".gz")) file += ".gz";
  gzFile f = gzopen(file.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + file);
  auto read = [&](void* out, unsigned n) {
    if (gzread(f, out, n) != static_cast<int>(n)) {
      gzclose(f);
      throw std::runtime_error(file + ": truncated IDX file");
    }
  };
  auto read_u32 = [&] {
    uint8_t b[4];
    read(b, 4);
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
  };
  const uint32_t magic = read_u32();
  if ((magic >> 8) != 0x08 || (magic & 0xff) == 0 || (magic & 0xff) > 3) {
    gzclose(f);
    throw std::runtime_error(file + ": not an IDX file of unsigned bytes");
  }
  dims.clear();
  int64_t count = 1;
  for (uint32_t i = 0; i < (magic & 0xff); ++i) {
    dims.push_back(read_u32());
    count *= dims.back();
  }
  std::vector<uint8_t> data(count);
  read(data.data(), static_cast<unsigned>(count));
  gzclose(f);
  return data;
}

// (images [N, 1, 28, 28] float32, normalised; labels [N] int64), the first `limit` of a split.
std::pair<Tensor, Tensor> load_split(const std::string& dir, const char* prefix, int64_t limit) {
  std::vector<int64_t> image_dims, label_dims;
  const std::vector<uint8_t> pixels = read_idx(dir + "/" + prefix + "-images-idx3-ubyte", image_dims);
  const std::vector<uint8_t> classes = read_idx(dir + "/" + prefix + "-labels-idx1-ubyte", label_dims);
  if (image_dims.size() != 3 || label_dims.size() != 1 || image_dims[0] != label_dims[0])
    throw std::runtime_error(dir + ": the " + prefix + " images and labels don't match");
  const int64_t n = std::min(image_dims[0], limit), size = image_dims[1] * image_dims[2];
  Tensor images = empty({n, 1, image_dims[1], image_dims[2]});
  Tensor labels = empty({n}, ScalarType::Int64);
  float* image_data = images.data_ptr<float>();
  int64_t* label_data = labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < n * size; ++i) image_data[i] = float((pixels[i] / 255.0 - kMean) / kStd);
  for (int64_t i = 0; i < n; ++i) label_data[i] = classes[i];
  return {images, labels};
}

double evaluate(Net& model, const Tensor& images, const Tensor& labels, bool use_autocast) {
  model->eval();
  NoGradGuard no_grad;
  AutocastGuard autocast(DeviceType::CPU, {}, use_autocast);
  int64_t correct = 0;
  for (int64_t start = 0; start < images.size(0); start += 1000) {
    const int64_t n = std::min<int64_t>(1000, images.size(0) - start);
    Tensor predicted = argmax(model(narrow(images, 0, start, n)), 1);
    correct += sum(predicted == narrow(labels, 0, start, n)).item<int64_t>();
  }
  model->train();
  return double(correct) / double(images.size(0));
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = "/usr/share/datasets/fashion-mnist", save;
  int epochs = 3;
  int64_t limit = INT64_MAX, batch_size = 128;
  bool use_autocast = true;
  double expect_accuracy = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--data" && has_value)
      data = argv[++i];
    else if (arg == "--epochs" && has_value)
      epochs = std::atoi(argv[++i]);
    else if (arg == "--limit" && has_value)
      limit = std::atoll(argv[++i]);
    else if (arg == "--save" && has_value)
      save = argv[++i];
    else if (arg == "--expect-accuracy" && has_value)
      expect_accuracy = std::atof(argv[++i]);
    else if (arg == "--no-autocast")
      use_autocast = false;
    else {
      std::fprintf(stderr,
                   "usage: fashion_mnist [--data DIR] [--epochs N] [--limit N] [--no-autocast] [--save PATH] "
                   "[--expect-accuracy A]\n");
      return 2;
    }
  }

  try {
    auto [train_images, train_labels] = load_split(data, "train", limit);
    auto [test_images, test_labels] = load_split(data, "t10k", limit);
    manual_seed(0);
    Net model;
    optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-3));
    const int64_t n = train_images.size(0);
    double accuracy = 0;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      const Tensor order = randperm(n);
      double running = 0;
      for (int64_t first = 0; first < n; first += batch_size) {
        const Tensor batch = narrow(order, 0, first, std::min(batch_size, n - first));
        const Tensor images = index_select(train_images, 0, batch);
        const Tensor labels = index_select(train_labels, 0, batch);
        optimizer.zero_grad();
        Tensor loss;
        {
          AutocastGuard autocast(DeviceType::CPU, {}, use_autocast);  // bfloat16 convolutions and matmuls
          loss = cross_entropy(model(images), labels);                // float32: losses run in float32
        }
        loss.backward();  // outside the region, as recommended
        optimizer.step();
        running = first == 0 ? loss.item<double>() : 0.95 * running + 0.05 * loss.item<double>();
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      accuracy = evaluate(model, test_images, test_labels, use_autocast);
      std::printf("%s epoch %d: loss %.3f, test accuracy %.2f%%, %.0f images/s\n",
                  use_autocast ? "autocast bfloat16" : "float32", epoch, running, 100 * accuracy, n / seconds);
    }
    if (!save.empty()) {
      save_safetensors(model->state_dict(), save);
      std::printf("weights saved to %s (Python: tensorplay.load)\n", save.c_str());
    }
    if (accuracy < expect_accuracy) {
      std::printf("FAILED: test accuracy %.2f%% is below the expected %.2f%%\n", 100 * accuracy, 100 * expect_accuracy);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Tensor printing in PyTorch's layout: Formatter (the width and notation of the values shown),
// summarized, vector_str, tensor_str, add_suffixes, to_string. Python's repr(tensor) is this code too
// (python/tensorplay/_tensor_str.py calls to_string), so the layout lives in one place.

#include "tensorplay/ops/print.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <mutex>
#include <ostream>
#include <vector>

#include "tensorplay/autograd/variable.h"
#include "tensorplay/ops/ops.h"

namespace tp {

namespace {

std::mutex g_options_mutex;
PrintOptions g_options;

// Python's f"{v:.{p}f}" and f"{v:.{p}e}": C's, except that Python writes a NaN without its sign.
std::string format_double(double v, int64_t precision, char conversion) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const char format[] = {'%', '.', '*', conversion, '\0'};
  int length = std::snprintf(nullptr, 0, format, static_cast<int>(precision), v);
  std::string text(length, '\0');
  std::snprintf(text.data(), text.size() + 1, format, static_cast<int>(precision), v);
  return text;
}

std::string pad_left(const std::string& text, int64_t width) {
  int64_t missing = width - static_cast<int64_t>(text.size());
  return missing > 0 ? std::string(missing, ' ') + text : text;
}

enum class ValueKind { Real, Complex, Text };

ValueKind value_kind(ScalarType dtype) {
  if (is_complex(dtype)) return ValueKind::Complex;
  return is_floating_point(dtype) ? ValueKind::Real : ValueKind::Text;
}

// A tensor's elements in order, as Python's tolist() holds them: doubles, complex doubles, or the
// text of each integer and bool.
struct Values {
  std::vector<double> real, imag;
  std::vector<std::string> text;
};

Values read_values(const Tensor& t) {
  Values values;
  Tensor flat = reshape(to(t, Device{}), {-1});
  switch (value_kind(t.dtype())) {
    case ValueKind::Real: {
      Tensor d = contiguous(to(flat, ScalarType::Float64));
      const double* p = d.data_ptr<double>();
      values.real.assign(p, p + d.numel());
      break;
    }
    case ValueKind::Complex: {
      Tensor c = contiguous(to(flat, ScalarType::ComplexDouble));
      const auto* p = c.data_ptr<std::complex<double>>();
      for (int64_t i = 0; i < c.numel(); ++i) {
        values.real.push_back(p[i].real());
        values.imag.push_back(p[i].imag());
      }
      break;
    }
    case ValueKind::Text:
      if (t.dtype() == ScalarType::Bool) {
        Tensor b = contiguous(flat);
        const bool* p = b.data_ptr<bool>();
        for (int64_t i = 0; i < b.numel(); ++i) values.text.push_back(p[i] ? "True" : "False");
      } else {
        Tensor n = contiguous(to(flat, ScalarType::Int64));
        const int64_t* p = n.data_ptr<int64_t>();
        for (int64_t i = 0; i < n.numel(); ++i) values.text.push_back(std::to_string(p[i]));
      }
      break;
  }
  return values;
}

// Chooses integer, fixed or scientific notation and a common width from the values shown.
class RealFormatter {
 public:
  RealFormatter(const std::vector<double>& values, const PrintOptions& options) : precision_(options.precision) {
    std::vector<double> finite;
    for (double v : values)
      if (std::isfinite(v) && v != 0) finite.push_back(v);
    if (finite.empty()) return;
    double largest = 0, smallest = INFINITY;
    for (double v : finite) {
      largest = std::max(largest, std::abs(v));
      smallest = std::min(smallest, std::abs(v));
      int_mode_ = int_mode_ && std::ceil(v) == v;
    }
    sci_mode_ = options.sci_mode.value_or(largest / smallest > 1000.0 || largest > 1.0e8 || smallest < 1.0e-4);
    for (double v : finite) {
      size_t width = sci_mode_   ? format_double(v, precision_, 'e').size()
                     : int_mode_ ? format_double(v, 0, 'f').size() + 1
                                 : format_double(v, precision_, 'f').size();
      max_width = std::max(max_width, static_cast<int64_t>(width));
    }
  }

  std::string format(double v) const {
    std::string text;
    if (sci_mode_) {
      text = format_double(v, precision_, 'e');
    } else if (int_mode_) {
      text = format_double(v, 0, 'f');
      if (std::isfinite(v)) text += ".";
    } else {
      text = format_double(v, precision_, 'f');
    }
    return pad_left(text, max_width);
  }

  int64_t max_width = 1;

 private:
  int64_t precision_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
};

// Real values with one RealFormatter; complex ones with one for the real parts and one for the
// imaginary parts, joined as 1.5000+2.0000j; integers and bools by their text.
class Formatter {
 public:
  Formatter(const Values& shown, ValueKind kind, const PrintOptions& options)
      : kind_(kind), real_(shown.real, options), imag_(shown.imag, options) {
    if (kind_ == ValueKind::Real) {
      max_width = real_.max_width;
    } else if (kind_ == ValueKind::Complex) {
      max_width = real_.max_width + imag_.max_width + 1;
    } else {
      for (const std::string& text : shown.text) max_width = std::max(max_width, static_cast<int64_t>(text.size()));
    }
  }

  std::string format(const Values& values, size_t i) const {
    if (kind_ == ValueKind::Real) return real_.format(values.real[i]);
    if (kind_ == ValueKind::Text) return pad_left(values.text[i], max_width);
    std::string imag = imag_.format(values.imag[i]) + "j";
    imag.erase(0, imag.find_first_not_of(' '));
    return real_.format(values.real[i]) + (imag[0] == '+' || imag[0] == '-' ? "" : "+") + imag;
  }

  int64_t max_width = 1;

 private:
  ValueKind kind_;
  RealFormatter real_, imag_;
};

std::vector<std::string> formatted(const Tensor& t, const Formatter& formatter) {
  Values values = read_values(t);
  std::vector<std::string> texts;
  for (int64_t i = 0; i < t.numel(); ++i) texts.push_back(formatter.format(values, i));
  return texts;
}

// The elements that a summarised print shows: edgeitems at both ends of every dim.
Tensor summarized(const Tensor& t, int64_t e) {
  if (t.dim() == 0) return t;
  const int64_t n = t.size(0);
  if (t.dim() == 1) return n > 2 * e ? cat({slice(t, 0, 0, e), slice(t, 0, n - e, std::nullopt)}) : t;
  if (e == 0) return empty(Shape(t.dim(), 0), t.dtype(), t.device());  // nothing shown but "..."
  TensorList parts;
  for (int64_t i = 0; i < n; ++i)
    if (n <= 2 * e || i < e || i >= n - e) parts.push_back(summarized(select(t, 0, i), e));
  return stack(parts);
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

std::string vector_str(const Tensor& t, int64_t indent, bool summarize, const Formatter& formatter,
                       const PrintOptions& options) {
  const int64_t element_length = formatter.max_width + 2;
  const int64_t per_line = std::max<int64_t>(
      1, static_cast<int64_t>(std::floor(static_cast<double>(options.linewidth - indent) / element_length)));
  const int64_t e = options.edgeitems;
  std::vector<std::string> data;
  if (summarize && e == 0) {
    data = {"..."};
  } else if (summarize && t.size(0) > 2 * e) {
    data = formatted(slice(t, 0, 0, e), formatter);
    data.push_back(" ...");
    for (std::string& text : formatted(slice(t, 0, -e, std::nullopt), formatter)) data.push_back(std::move(text));
  } else {
    data = formatted(t, formatter);
  }
  std::vector<std::string> lines;
  for (size_t i = 0; i < data.size(); i += per_line)
    lines.push_back(
        join(std::vector<std::string>(data.begin() + i, data.begin() + std::min(data.size(), i + per_line)), ", "));
  return "[" + join(lines, ",\n" + std::string(indent + 1, ' ')) + "]";
}

std::string tensor_str(const Tensor& t, int64_t indent, bool summarize, const Formatter& formatter,
                       const PrintOptions& options) {
  if (t.dim() == 0) return formatted(t, formatter)[0];
  if (t.dim() == 1) return vector_str(t, indent, summarize, formatter, options);
  const int64_t e = options.edgeitems, n = t.size(0);
  std::vector<std::string> rows;
  auto row = [&](int64_t i) { rows.push_back(tensor_str(select(t, 0, i), indent + 1, summarize, formatter, options)); };
  if (summarize && n > 2 * e) {
    for (int64_t i = 0; i < e; ++i) row(i);
    rows.push_back("...");
    for (int64_t i = n - e; i < n; ++i) row(i);
  } else {
    for (int64_t i = 0; i < n; ++i) row(i);
  }
  return "[" + join(rows, "," + std::string(t.dim() - 1, '\n') + std::string(indent + 1, ' ')) + "]";
}

// A sparse tensor's suffixes start on a line of their own (force_newline), as in PyTorch.
std::string add_suffixes(const std::string& text, const std::vector<std::string>& suffixes, int64_t indent,
                         const PrintOptions& options, bool force_newline = false) {
  std::string out = text;
  // Python's len(text) - text.rfind("\n") + 1, where rfind gives -1 when there is no newline.
  size_t newline = text.rfind('\n');
  int64_t last_line_len =
      static_cast<int64_t>(text.size()) - (newline == std::string::npos ? -1 : static_cast<int64_t>(newline)) + 1;
  for (const std::string& suffix : suffixes) {
    const auto length = static_cast<int64_t>(suffix.size());
    if (force_newline || last_line_len + length + 2 > options.linewidth) {
      out += ",\n" + std::string(indent, ' ') + suffix;
      last_line_len = indent + length;
      force_newline = false;
    } else {
      out += ", " + suffix;
      last_line_len += length + 2;
    }
  }
  return out + ")";
}

// Python's repr of a tuple of sizes: (), (3,), (2, 3).
std::string size_tuple(IntArrayRef sizes) {
  std::string out = "(";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + (sizes.size() == 1 ? ",)" : ")");
}

// A sparse COO tensor prints its parts, each as a tensor of its own (without their dtype, which
// the tensor's suffixes give), as PyTorch does.
std::string sparse_body(const Tensor& t, int64_t indent, const PrintOptions& options) {
  auto part = [&](const char* label, const Tensor& x) {
    const std::string prefix = std::string(label) + "=tensor(";
    std::string body = "[]";
    if (x.numel() > 0) {
      const bool summarize = static_cast<double>(x.numel()) > options.threshold;
      Formatter formatter(read_values(summarize ? summarized(x, options.edgeitems) : x), value_kind(x.dtype()),
                          options);
      body = tensor_str(x, indent + static_cast<int64_t>(prefix.size()), summarize, formatter, options);
    } else {
      body += ", size=" + size_tuple(x.sizes());
    }
    return prefix + body + ")";
  };
  return part("indices", sparse_indices(t)) + ",\n" + std::string(indent, ' ') +
         part("values", autograd::detach(sparse_values(t)));
}

}  // namespace

PrintOptions get_printoptions() {
  std::lock_guard<std::mutex> lock(g_options_mutex);
  return g_options;
}

void set_printoptions(const PrintOptions& options) {
  std::lock_guard<std::mutex> lock(g_options_mutex);
  g_options = options;
}

std::string to_string(const Tensor& t, const PrintOptions& options) {
  TP_CHECK(t.defined(), "[print] the tensor is undefined");
  const std::string prefix = "tensor(";
  const auto indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  if (!t.device().is_cpu()) suffixes.push_back("device='" + t.device().str() + "'");
  // An empty tensor has no elements to show its dtype by, so only the default one goes unsaid.
  const ScalarType default_dtype = get_default_dtype();
  const ScalarType dtype = t.dtype();
  bool shows_dtype = dtype != default_dtype && dtype != complex_type_of(default_dtype) && dtype != ScalarType::Int64 &&
                     dtype != ScalarType::Bool;
  std::string body;
  if (t.is_sparse()) {
    body = sparse_body(t, indent, options);
    suffixes.push_back("size=" + size_tuple(t.sizes()));
    suffixes.push_back("nnz=" + std::to_string(sparse_indices(t).size(1)));
  } else if (!t.has_data()) {
    shows_dtype = dtype != default_dtype;
    suffixes.push_back("size=" + size_tuple(t.sizes()));
    body = "...";
  } else if (t.numel() == 0) {
    shows_dtype = dtype != default_dtype;
    if (t.dim() != 1) suffixes.push_back("size=" + size_tuple(t.sizes()));
    body = "[]";
  } else {
    if (options.edgeitems == 0) suffixes.push_back("size=" + size_tuple(t.sizes()));  // the values are all "..."
    Tensor data = t.detach();
    const bool summarize = static_cast<double>(data.numel()) > options.threshold;
    Tensor shown = summarize ? summarized(data, options.edgeitems) : data;
    Formatter formatter(read_values(shown), value_kind(dtype), options);
    body = tensor_str(data, indent, summarize, formatter, options);
  }
  if (shows_dtype) suffixes.push_back("dtype=tensorplay." + std::string(name(dtype)));
  if (t.is_sparse()) suffixes.push_back("layout=tensorplay.sparse_coo");
  if (auto grad_fn = autograd::grad_fn(t)) {
    suffixes.push_back("grad_fn=<" + grad_fn->name() + ">");
  } else if (t.requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return add_suffixes(prefix + body, suffixes, indent, options, t.is_sparse());
}

std::string to_string(const Tensor& t) { return to_string(t, get_printoptions()); }

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace tp

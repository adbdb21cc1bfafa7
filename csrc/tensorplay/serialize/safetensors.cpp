// safetensors save and load. The writer reproduces python/tensorplay/serialization.py's save_file
// byte for byte for a flat dict; the reader applies its load_file checks, in the same order and
// with the same wording after the "[op] <path>: " prefix, and raises ValueError where it does.

#include "tensorplay/serialize/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string_view>
#include <unordered_set>

#include "tensorplay/core/error.h"
#include "tensorplay/ops/ops.h"
#include "tensorplay/serialize/json.h"

namespace tp::serialize {
namespace {

using json::cut_short;
using json::invalid_utf8_at;
using json::Json;
using json::json_string;
using json::kShortLimit;
using json::repr_string;
using json::repr_to;
using json::short_repr;
using json::type_name;

// The file stores little-endian bytes, which tensors are copied to and from as they are.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian machine");

// safetensors refuses headers over 100 MB; so does Python's reader, and so do we, before reading one.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// numpy's limit on dimensions, which Python's reader enforces.
constexpr size_t kMaxNdim = 64;
constexpr int64_t kMaxNBytes = INT64_MAX;
constexpr std::string_view kStructureKey = "tensorplay.structure";

struct DTypeCode {
  ScalarType dtype;
  std::string_view code;
};
// The codes Python's _DTYPES maps.
constexpr std::array<DTypeCode, 10> kDTypes = {{
    {ScalarType::Float32, "F32"},
    {ScalarType::Float64, "F64"},
    {ScalarType::Float16, "F16"},
    {ScalarType::BFloat16, "BF16"},
    {ScalarType::Int8, "I8"},
    {ScalarType::Int16, "I16"},
    {ScalarType::Int32, "I32"},
    {ScalarType::Int64, "I64"},
    {ScalarType::UInt8, "U8"},
    {ScalarType::Bool, "BOOL"},
}};

const DTypeCode* find_dtype(ScalarType t) {
  for (const auto& d : kDTypes)
    if (d.dtype == t) return &d;
  return nullptr;
}
const DTypeCode* find_code(std::string_view code) {
  for (const auto& d : kDTypes)
    if (d.code == code) return &d;
  return nullptr;
}

// ---------------------------------------------------------------- load

struct File {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> handle{nullptr, &std::fclose};
  uint64_t size = 0;
};

// One tensor's validated header entry.
struct Entry {
  std::string name;
  const DTypeCode* dtype;
  Shape shape;
  int64_t begin, end;
};

struct Header {
  std::vector<Entry> entries;  // header order
  std::map<std::string, std::string> metadata;
};

class Loader {
 public:
  Loader(const char* op, const std::string& path) : op_(op), path_(path) {}

  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    detail::fail(ErrorKind::Value, prefix(), args...);
  }
  std::string prefix() const { return "[" + std::string(op_) + "] " + path_ + ": "; }

  // Opens the file and checks its header against it; the file is left at the data section.
  Header open() {
    file_.handle.reset(std::fopen(path_.c_str(), "rb"));
    if (!file_.handle) detail::fail(ErrorKind::Runtime, "[", op_, "] can't open ", path_, ": ", std::strerror(errno));
    struct stat st;
    if (::fstat(::fileno(file_.handle.get()), &st) != 0)
      detail::fail(ErrorKind::Runtime, "[", op_, "] can't read ", path_, ": ", std::strerror(errno));
    if (!S_ISREG(st.st_mode)) detail::fail(ErrorKind::Runtime, "[", op_, "] ", path_, " is not a regular file");
    file_.size = static_cast<uint64_t>(st.st_size);

    unsigned char len_bytes[8];
    read_exact(len_bytes, 8, "the header length");
    uint64_t header_len;
    std::memcpy(&header_len, len_bytes, 8);
    if (header_len > kMaxHeaderBytes)
      fail("header length ", header_len, " exceeds the limit of ", kMaxHeaderBytes, " bytes");
    if (8 + header_len > file_.size)
      fail("header length ", header_len, " is larger than the file (", file_.size, " bytes)");
    std::string raw(header_len, '\0');
    read_exact(raw.data(), header_len, "the header");
    size_t bad = invalid_utf8_at(raw);
    if (bad != std::string::npos)
      fail("the header is not valid UTF-8: can't decode byte 0x", hex_byte(raw[bad]), " in position ", bad);
    Json json = json::parse(raw, prefix(), "the header");
    if (json.kind != Json::Kind::Object) fail("the header must be a JSON object, not ", type_name(json));

    Header header;
    if (const Json* meta = json.find("__metadata__")) {
      bool ok = meta->kind == Json::Kind::Object;
      for (size_t i = 0; ok && i < meta->members.size(); ++i) ok = meta->members[i].second.kind == Json::Kind::String;
      if (!ok) fail("__metadata__ must be an object mapping strings to strings");
      for (const auto& [k, v] : meta->members) header.metadata.emplace(k, v.text);
    }
    for (const auto& [name, info] : json.members)
      if (name != "__metadata__") header.entries.push_back(check_entry(name, info));

    data_order_ = check_tiling(header.entries);
    int64_t data_len = data_order_.empty() ? 0 : header.entries[data_order_.back()].end;
    uint64_t data_section = file_.size - 8 - header_len;
    if (data_section != static_cast<uint64_t>(data_len))
      fail("the data section is ", data_section, " bytes, but the header describes ", data_len);
    return header;
  }

  // The tensors, read in data order (the file's), returned in header order.
  NamedTensors read_tensors(Header& header) {
    std::vector<Tensor> tensors(header.entries.size());
    for (size_t i : data_order_) {
      const Entry& e = header.entries[i];
      Tensor t = empty(e.shape, e.dtype->dtype);
      int64_t nbytes = e.end - e.begin;
      if (nbytes > 0) read_exact(t.data_ptr(), static_cast<uint64_t>(nbytes), "tensor " + short_repr(e.name));
      if (e.dtype->dtype == ScalarType::Bool) {
        // Any other byte is not a bool; the kernels assume 0 or 1.
        auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
        if (std::any_of(bytes, bytes + nbytes, [](unsigned char b) { return b > 1; }))
          fail("bool tensor ", short_repr(e.name), " holds bytes other than 0 and 1");
      }
      tensors[i] = std::move(t);
    }
    // The size was checked when opening; this catches a file that grew meanwhile.
    if (std::fgetc(file_.handle.get()) != EOF) fail("the file has bytes after the data section");
    NamedTensors out;
    out.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i)
      out.emplace_back(std::move(header.entries[i].name), std::move(tensors[i]));
    return out;
  }

 private:
  static std::string hex_byte(char c) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(c));
    return buf;
  }

  void read_exact(void* dst, uint64_t n, const std::string& what) {
    auto* out = static_cast<char*>(dst);
    uint64_t got = 0;
    while (got < n) {
      size_t r = std::fread(out + got, 1, static_cast<size_t>(n - got), file_.handle.get());
      if (r == 0) {
        if (std::ferror(file_.handle.get()))
          detail::fail(ErrorKind::Runtime, "[", op_, "] can't read ", path_, ": ", std::strerror(errno));
        fail("the file is truncated: expected ", n, " bytes of ", what, ", got ", got);
      }
      got += r;
    }
  }

  static bool is_non_negative_int(const Json& v) {
    return v.kind == Json::Kind::Int && (v.integer ? *v.integer >= 0 : v.text[0] != '-');
  }
  // a <= b, for non-negative integers of any size (JSON writes them without leading zeros).
  static bool less_equal(const Json& a, const Json& b) {
    if (a.integer && b.integer) return *a.integer <= *b.integer;
    if (a.integer || b.integer) return a.integer.has_value();
    return a.text.size() != b.text.size() ? a.text.size() < b.text.size() : a.text <= b.text;
  }

  Entry check_entry(const std::string& name, const Json& info) const {
    std::string sname = short_repr(name);
    if (info.kind != Json::Kind::Object)
      fail("the header entry for ", sname, " must be an object, not ", type_name(info));
    const Json* code = info.find("dtype");
    const Json* shape = info.find("shape");
    const Json* offsets = info.find("data_offsets");
    if (info.members.size() != 3 || !code || !shape || !offsets) {
      std::vector<std::string> keys;
      for (const auto& m : info.members) keys.push_back(m.first);
      std::sort(keys.begin(), keys.end());
      std::string list = "[";
      for (size_t i = 0; i < keys.size() && list.size() <= kShortLimit; ++i) {
        if (i) list += ", ";
        repr_string(keys[i], list);
      }
      fail("the header entry for ", sname, " must have exactly the fields dtype, shape and data_offsets, not ",
           cut_short(list + "]"));
    }
    const DTypeCode* dtype = code->kind == Json::Kind::String ? find_code(code->text) : nullptr;
    if (!dtype) fail("tensor ", sname, " has unknown dtype ", short_repr(*code));

    bool shape_ok = shape->kind == Json::Kind::Array && shape->items.size() <= kMaxNdim;
    bool too_large = false;  // a dim beyond int64: the extent check below reports it, as Python's does
    for (size_t i = 0; shape_ok && i < shape->items.size(); ++i) {
      shape_ok = is_non_negative_int(shape->items[i]);
      too_large |= !shape->items[i].integer;
    }
    if (!shape_ok)
      fail("tensor ", sname, " has invalid shape ", short_repr(*shape), ": expected a list of at most ", kMaxNdim,
           " non-negative integers");

    const auto& o = offsets->items;
    if (!(offsets->kind == Json::Kind::Array && o.size() == 2 && is_non_negative_int(o[0]) &&
          is_non_negative_int(o[1]) && less_equal(o[0], o[1])))
      fail("tensor ", sname, " has invalid data_offsets ", short_repr(*offsets),
           ": expected [begin, end] with 0 <= begin <= end");

    Shape dims;
    int64_t extent = itemsize(dtype->dtype);
    for (const Json& d : shape->items) {
      int64_t dim = d.integer.value_or(0);
      dims.push_back(dim);
      if (too_large || __builtin_mul_overflow(extent, std::max<int64_t>(dim, 1), &extent) || extent > kMaxNBytes)
        fail("tensor ", sname, " has shape ", short_repr(*shape), ", too large to index");
    }
    int64_t nbytes = itemsize(dtype->dtype) * numel(dims);
    std::string shape_text;
    repr_to(*shape, shape_text, SIZE_MAX);
    if (!o[0].integer || !o[1].integer)
      fail("tensor ", sname, " of dtype ", dtype->code, " and shape ", shape_text, " needs ", nbytes,
           " bytes, but its data_offsets ", short_repr(*offsets), " lie beyond any file");
    int64_t begin = *o[0].integer, end = *o[1].integer;
    if (end - begin != nbytes)
      fail("tensor ", sname, " of dtype ", dtype->code, " and shape ", shape_text, " needs ", nbytes,
           " bytes, but its data_offsets ", short_repr(*offsets), " span ", end - begin);
    return Entry{name, dtype, std::move(dims), begin, end};
  }

  // The entries' indices in data order; they must tile the data section exactly.
  std::vector<size_t> check_tiling(const std::vector<Entry>& entries) const {
    std::vector<size_t> order(entries.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::pair(entries[a].begin, entries[a].end) < std::pair(entries[b].begin, entries[b].end);
    });
    int64_t offset = 0;
    for (size_t i : order) {
      const Entry& e = entries[i];
      if (e.begin != offset)
        fail("tensor ", short_repr(e.name), " starts at offset ", e.begin, ", expected ", offset, ": it ",
             e.begin < offset ? "overlaps the previous tensor" : "leaves a gap before it");
      offset = e.end;
    }
    return order;
  }

  const char* op_;
  const std::string& path_;
  File file_;
  std::vector<size_t> data_order_;
};

// ---------------------------------------------------------------- save

std::string random_hex() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    out += buf;
  }
  return out;
}

// The header save_file writes for a flat dict: its structure entry names each key's tensor, so
// Python's load returns a plain dict in this order.
std::string build_header(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata) {
  std::string structure = R"({"version":1,"root":{"type":"dict","items":[)";
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string name = json_string(tensors[i].first, true);
    if (i) structure += ',';
    structure += R"([{"type":"str","value":)" + name + R"(},{"type":"tensor","name":)" + name + "}]";
  }
  structure += "]}}";

  std::string header =
      R"({"__metadata__":{"format":"pt",)" + json_string(kStructureKey, false) + ":" + json_string(structure, false);
  for (const auto& [key, value] : metadata) header += "," + json_string(key, false) + ":" + json_string(value, false);
  header += "}";
  int64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header +=
        "," + json_string(name, false) + R"(:{"dtype":")" + std::string(find_dtype(t.dtype())->code) + R"(","shape":[)";
    for (int64_t d = 0; d < t.dim(); ++d) header += (d ? "," : "") + std::to_string(t.size(d));
    int64_t nbytes = t.nbytes();
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + nbytes) + "]}";
    offset += nbytes;
  }
  header += "}";
  // Like safetensors, pad with spaces so the data section starts 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');
  return header;
}

class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path) : path_(path) {
    namespace fs = std::filesystem;
    // Through a symlink, the file it points to is replaced (as a plain write would), not the link.
    std::error_code ec;
    fs::path target = fs::weakly_canonical(fs::path(path), ec);
    if (ec) fail("can't resolve the path", ec.message());
    if (!target.has_filename()) fail("can't write to it", "not a file path");
    target_ = target.string();
    tmp_ = (target.parent_path() / ("." + target.filename().string() + "." + random_hex() + ".tmp")).string();
    // open(), not mkstemp, so the file gets the usual permissions.
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) fail("can't create the temporary file " + tmp_, std::strerror(errno));
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }

  void write(const void* data, size_t n) {
    auto* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail("can't write " + tmp_, std::strerror(errno));
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  void commit() {
    // The bytes reach the disk before the rename makes them visible.
    if (::fsync(fd_) != 0) fail("can't sync " + tmp_, std::strerror(errno));
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) fail("can't close " + tmp_, std::strerror(errno));
    if (std::rename(tmp_.c_str(), target_.c_str()) != 0) fail("can't rename it to " + target_, std::strerror(errno));
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& why) const {
    detail::fail(ErrorKind::Runtime, "[save_safetensors] ", path_, ": ", what, ": ", why);
  }

  std::string path_, target_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

void check_utf8(const std::string& s, const char* what) {
  size_t bad = invalid_utf8_at(s);
  TP_CHECK_VALUE(bad == std::string::npos, "[save_safetensors] ", what, " ", short_repr(s.substr(0, bad)),
                 "... is not valid UTF-8 at byte ", bad);
}

}  // namespace

void save_safetensors(const NamedTensors& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata) {
  std::unordered_set<std::string_view> names;
  for (const auto& [name, t] : tensors) {
    check_utf8(name, "tensor name");
    TP_CHECK_VALUE(name != "__metadata__", "[save_safetensors] the tensor name '__metadata__' is reserved");
    TP_CHECK_VALUE(names.insert(name).second, "[save_safetensors] duplicate tensor name ", short_repr(name));
    TP_CHECK_VALUE(t.defined(), "[save_safetensors] tensor ", short_repr(name), " is undefined");
    TP_CHECK_TYPE(find_dtype(t.dtype()), "[save_safetensors] tensor ", short_repr(name), " has unsupported dtype ",
                  tp::name(t.dtype()));
    TP_CHECK_VALUE(t.has_data(), "[save_safetensors] tensor ", short_repr(name),
                   " is on the meta device, with no data");
  }
  for (const auto& [key, value] : metadata) {
    check_utf8(key, "metadata key");
    check_utf8(value, "metadata value");
    TP_CHECK_VALUE(key != "format" && key != kStructureKey, "[save_safetensors] metadata key ", short_repr(key),
                   " is reserved: save_safetensors writes it");
  }

  std::string header = build_header(tensors, metadata);
  TP_CHECK_VALUE(header.size() <= kMaxHeaderBytes, "[save_safetensors] the header would be ", header.size(),
                 " bytes, over the limit of ", kMaxHeaderBytes, " that safetensors readers accept");
  AtomicFile file(path);
  uint64_t header_len = header.size();
  file.write(&header_len, 8);
  file.write(header.data(), header.size());
  for (const auto& [name, t] : tensors) {
    // One tensor at a time, so at most one contiguous copy exists at once.
    Tensor c = t.detach();
    if (!c.device().is_cpu()) c = to(c, Device{});
    c = c.contiguous();
    if (c.nbytes() > 0) file.write(c.data_ptr(), static_cast<size_t>(c.nbytes()));
  }
  file.commit();
}

NamedTensors load_safetensors(const std::string& path) {
  Loader loader("load_safetensors", path);
  Header header = loader.open();
  return loader.read_tensors(header);
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  return Loader("load_safetensors_metadata", path).open().metadata;
}

}  // namespace tp::serialize

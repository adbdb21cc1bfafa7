// safetensors from C++: the bytes Python's save_file writes, Python-written files read back, and
// corrupt files rejected with a ValueError that names the problem, never a crash.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "tensorplay/ops/ops.h"
#include "tensorplay/serialize/safetensors.h"

namespace tp {
namespace {

// What tensorplay.serialization.save_file writes, as hex, so the test needs no Python. Regenerate with
//   from tensorplay.serialization import save_file
//   save_file(d, path); open(path, "rb").read().hex()
// for d = the dict of mixed_tensors() below (same names, values and order; kOddName is
// "b\u00e9 \"q\"\\\t\x7f\U0001F600"), for {}, and for
// {"enc": {"w": tensor([[1., 2.]]), "b": tensor([3.], dtype=bfloat16)}, "step": 7, "names": ["a"],
//  "mask": tensor([True, False])}.
constexpr std::string_view kPythonMixed =
    "38060000000000007b225f5f6d657461646174615f5f223a7b22666f726d6174223a227074222c2274656e736f72706c"
    "61792e737472756374757265223a227b5c2276657273696f6e5c223a312c5c22726f6f745c223a7b5c22747970655c22"
    "3a5c22646963745c222c5c226974656d735c223a5b5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c"
    "223a5c227765696768745c227d2c7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c223a5c227765"
    "696768745c227d5d2c5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c223a5c22625c5c7530306539"
    "205c5c5c22715c5c5c225c5c5c5c5c5c745c5c75303037665c5c75643833645c5c75646530305c227d2c7b5c22747970"
    "655c223a5c2274656e736f725c222c5c226e616d655c223a5c22625c5c7530306539205c5c5c22715c5c5c225c5c5c5c"
    "5c5c745c5c75303037665c5c75643833645c5c75646530305c227d5d2c5b7b5c22747970655c223a5c227374725c222c"
    "5c2276616c75655c223a5c2268616c665c227d2c7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c"
    "223a5c2268616c665c227d5d2c5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c223a5c2262665c22"
    "7d2c7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c223a5c2262665c227d5d2c5b7b5c22747970"
    "655c223a5c227374725c222c5c2276616c75655c223a5c22666c61675c227d2c7b5c22747970655c223a5c2274656e73"
    "6f725c222c5c226e616d655c223a5c22666c61675c227d5d2c5b7b5c22747970655c223a5c227374725c222c5c227661"
    "6c75655c223a5c227363616c61725c227d2c7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c223a"
    "5c227363616c61725c227d5d2c5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c223a5c22656d7074"
    "795c227d2c7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c223a5c22656d7074795c227d5d2c5b"
    "7b5c22747970655c223a5c227374725c222c5c2276616c75655c223a5c226936345c227d2c7b5c22747970655c223a5c"
    "2274656e736f725c222c5c226e616d655c223a5c226936345c227d5d2c5b7b5c22747970655c223a5c227374725c222c"
    "5c2276616c75655c223a5c226931365c227d2c7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c22"
    "3a5c226931365c227d5d2c5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c223a5c2275385c227d2c"
    "7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c223a5c2275385c227d5d5d7d7d227d2c22776569"
    "676874223a7b226474797065223a22463332222c227368617065223a5b322c335d2c22646174615f6f66667365747322"
    "3a5b302c32345d7d2c2262c3a9205c22715c225c5c5c747ff09f9880223a7b226474797065223a224938222c22736861"
    "7065223a5b325d2c22646174615f6f666673657473223a5b32342c32365d7d2c2268616c66223a7b226474797065223a"
    "22463136222c227368617065223a5b335d2c22646174615f6f666673657473223a5b32362c33325d7d2c226266223a7b"
    "226474797065223a2242463136222c227368617065223a5b335d2c22646174615f6f666673657473223a5b33322c3338"
    "5d7d2c22666c6167223a7b226474797065223a22424f4f4c222c227368617065223a5b335d2c22646174615f6f666673"
    "657473223a5b33382c34315d7d2c227363616c6172223a7b226474797065223a22463634222c227368617065223a5b5d"
    "2c22646174615f6f666673657473223a5b34312c34395d7d2c22656d707479223a7b226474797065223a22493332222c"
    "227368617065223a5b302c335d2c22646174615f6f666673657473223a5b34392c34395d7d2c22693634223a7b226474"
    "797065223a22493634222c227368617065223a5b325d2c22646174615f6f666673657473223a5b34392c36355d7d2c22"
    "693136223a7b226474797065223a22493136222c227368617065223a5b325d2c22646174615f6f666673657473223a5b"
    "36352c36395d7d2c227538223a7b226474797065223a225538222c227368617065223a5b325d2c22646174615f6f6666"
    "73657473223a5b36392c37315d7d7d20000000000000803f0000004000004040000080400000a0400102003800c0ff7b"
    "803f00bf49400100010000000000000440ffffffffffffffff0000000000010000d4fe070000ff";

constexpr std::string_view kPythonEmpty =
    "78000000000000007b225f5f6d657461646174615f5f223a7b22666f726d6174223a227074222c2274656e736f72706c"
    "61792e737472756374757265223a227b5c2276657273696f6e5c223a312c5c22726f6f745c223a7b5c22747970655c22"
    "3a5c22646963745c222c5c226974656d735c223a5b5d7d7d227d7d2020202020";

constexpr std::string_view kPythonNested =
    "10030000000000007b225f5f6d657461646174615f5f223a7b22666f726d6174223a227074222c2274656e736f72706c"
    "61792e737472756374757265223a227b5c2276657273696f6e5c223a312c5c22726f6f745c223a7b5c22747970655c22"
    "3a5c22646963745c222c5c226974656d735c223a5b5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c"
    "223a5c22656e635c227d2c7b5c22747970655c223a5c22646963745c222c5c226974656d735c223a5b5b7b5c22747970"
    "655c223a5c227374725c222c5c2276616c75655c223a5c22775c227d2c7b5c22747970655c223a5c2274656e736f725c"
    "222c5c226e616d655c223a5c22656e632e775c227d5d2c5b7b5c22747970655c223a5c227374725c222c5c2276616c75"
    "655c223a5c22625c227d2c7b5c22747970655c223a5c2274656e736f725c222c5c226e616d655c223a5c22656e632e62"
    "5c227d5d5d7d5d2c5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c223a5c22737465705c227d2c7b"
    "5c22747970655c223a5c22696e745c222c5c2276616c75655c223a377d5d2c5b7b5c22747970655c223a5c227374725c"
    "222c5c2276616c75655c223a5c226e616d65735c227d2c7b5c22747970655c223a5c226c6973745c222c5c226974656d"
    "735c223a5b7b5c22747970655c223a5c227374725c222c5c2276616c75655c223a5c22615c227d5d7d5d2c5b7b5c2274"
    "7970655c223a5c227374725c222c5c2276616c75655c223a5c226d61736b5c227d2c7b5c22747970655c223a5c227465"
    "6e736f725c222c5c226e616d655c223a5c226d61736b5c227d5d5d7d7d227d2c22656e632e77223a7b22647479706522"
    "3a22463332222c227368617065223a5b312c325d2c22646174615f6f666673657473223a5b302c385d7d2c22656e632e"
    "62223a7b226474797065223a2242463136222c227368617065223a5b315d2c22646174615f6f666673657473223a5b38"
    "2c31305d7d2c226d61736b223a7b226474797065223a22424f4f4c222c227368617065223a5b325d2c22646174615f6f"
    "666673657473223a5b31302c31325d7d7d202020202020200000803f0000004040400100";

// A name that exercises every kind of JSON escape: quotes, a backslash, a control character, DEL
// and characters outside the BMP (\u escapes and surrogate pairs in the structure entry).
const std::string kOddName = "b\xc3\xa9 \"q\"\\\t\x7f\xf0\x9f\x98\x80";

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "tp_safetensors_" + std::to_string(::getpid()) + "_" + name;
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, std::string_view bytes) {
  std::filesystem::remove(path);  // a new file is quicker to write than a truncated one
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file with this header (as written, unpadded) and data section.
std::string file_with(std::string_view header, std::string_view data = {}) {
  uint64_t n = header.size();
  std::string out(reinterpret_cast<const char*>(&n), 8);
  return out.append(header).append(data);
}

template <class T>
Tensor make(std::initializer_list<T> values, Shape shape) {
  Tensor t = empty(shape, scalar_type_of<T>());
  T* p = t.data_ptr<T>();
  for (T v : values) *p++ = v;
  return t;
}

serialize::NamedTensors mixed_tensors() {
  return {
      {"weight", arange(0, 6, 1, ScalarType::Float32).reshape(IntArrayRef{2, 3})},
      {kOddName, make<int8_t>({1, 2}, {2})},
      {"half", make<Half>({0.5f, -2.0f, 65504.0f}, {3})},
      {"bf", make<BFloat16>({1.0f, -0.5f, 3.140625f}, {3})},
      {"flag", make<bool>({true, false, true}, {3})},
      {"scalar", make<double>({2.5}, {})},
      {"empty", empty({0, 3}, ScalarType::Int32)},
      {"i64", make<int64_t>({-1, int64_t{1} << 40}, {2})},
      {"i16", make<int16_t>({-300, 7}, {2})},
      {"u8", make<uint8_t>({0, 255}, {2})},
  };
}

// Same dtype, shape and bytes.
void expect_same(const Tensor& a, const Tensor& b, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(Shape(a.sizes().begin(), a.sizes().end()), Shape(b.sizes().begin(), b.sizes().end()));
  Tensor ca = a.contiguous(), cb = b.contiguous();
  EXPECT_EQ(std::memcmp(ca.data_ptr(), cb.data_ptr(), static_cast<size_t>(ca.nbytes())), 0);
}

void expect_same(const serialize::NamedTensors& a, const serialize::NamedTensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    expect_same(a[i].second, b[i].second, a[i].first);
  }
}

// f() raises tp::Error of this kind, with a message that contains each of parts.
void expect_error(const std::function<void()>& f, ErrorKind kind, std::initializer_list<std::string_view> parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing " << *parts.begin();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (std::string_view part : parts)
      EXPECT_NE(std::string_view(e.what()).find(part), std::string_view::npos) << e.what();
  }
}

TEST(Safetensors, SavesTheBytesPythonSaveFileWrites) {
  std::string path = temp_path("mixed.safetensors");
  save_safetensors(mixed_tensors(), path);
  EXPECT_EQ(read_bytes(path), from_hex(kPythonMixed));
  save_safetensors({}, path);
  EXPECT_EQ(read_bytes(path), from_hex(kPythonEmpty));
  std::filesystem::remove(path);
}

TEST(Safetensors, RoundTripKeepsEveryDtypeValueAndTheOrder) {
  std::string path = temp_path("roundtrip.safetensors");
  serialize::NamedTensors tensors = mixed_tensors();
  save_safetensors(tensors, path);
  expect_same(load_safetensors(path), tensors);
  // Reversed, to show the order comes from the caller, not from sorting.
  std::reverse(tensors.begin(), tensors.end());
  save_safetensors(tensors, path);
  expect_same(load_safetensors(path), tensors);
  save_safetensors({}, path);
  EXPECT_TRUE(load_safetensors(path).empty());
  std::filesystem::remove(path);
}

TEST(Safetensors, LoadsWhatPythonWrote) {
  std::string path = temp_path("python.safetensors");
  write_bytes(path, from_hex(kPythonMixed));
  expect_same(load_safetensors(path), mixed_tensors());
  // A nested object loads as its tensors, named by their dotted paths; 7 and ["a"] are not tensors.
  write_bytes(path, from_hex(kPythonNested));
  expect_same(load_safetensors(path), {{"enc.w", make<float>({1, 2}, {1, 2})},
                                       {"enc.b", make<BFloat16>({3.0f}, {1})},
                                       {"mask", make<bool>({true, false}, {2})}});
  std::map<std::string, std::string> metadata = load_safetensors_metadata(path);
  EXPECT_EQ(metadata.at("format"), "pt");
  EXPECT_TRUE(metadata.contains("tensorplay.structure"));
  std::filesystem::remove(path);
}

TEST(Safetensors, HeaderOrderIsKeptWhenTheDataIsInAnotherOrder) {
  // As the safetensors library writes: no metadata, and data not in header order.
  std::string path = temp_path("order.safetensors");
  std::string data = std::string("\x01\x00\x02\x00", 4) + std::string("\x00\x00\x80\x3f", 4);
  write_bytes(path, file_with(R"({"z":{"dtype":"F32","shape":[],"data_offsets":[4,8]},)"
                              R"( "a" : {"shape":[2],"data_offsets":[0,4],"dtype":"I16"}})",
                              data));
  expect_same(load_safetensors(path), {{"z", make<float>({1.0f}, {})}, {"a", make<int16_t>({1, 2}, {2})}});
  EXPECT_TRUE(load_safetensors_metadata(path).empty());
  std::filesystem::remove(path);
}

TEST(Safetensors, NonContiguousAndSharedTensorsAreWrittenWholeAndContiguous) {
  std::string path = temp_path("views.safetensors");
  Tensor x = arange(0, 12, 1, ScalarType::Float32).reshape(IntArrayRef{3, 4});
  Tensor xt = transpose(x, 0, 1);
  Tensor row = select(x, 0, 1);
  Tensor param = ones({2}).set_requires_grad(true);
  save_safetensors({{"x", x}, {"xt", xt}, {"row", row}, {"param", param}}, path);
  serialize::NamedTensors loaded = load_safetensors(path);
  expect_same(loaded, {{"x", x}, {"xt", xt.contiguous()}, {"row", row.contiguous()}, {"param", param.detach()}});
  EXPECT_EQ(std::filesystem::file_size(path) % 8, 0u);  // 12 + 12 + 4 + 2 floats after an aligned header
  EXPECT_NE(loaded[0].second.impl()->storage(), loaded[1].second.impl()->storage());
  EXPECT_FALSE(loaded[3].second.requires_grad());
  std::filesystem::remove(path);
}

TEST(Safetensors, MetadataJoinsTheFormatAndStructureEntries) {
  std::string path = temp_path("metadata.safetensors");
  save_safetensors({{"w", ones({1})}}, path, {{"step", "100"}, {"note", "caf\xc3\xa9\n\"x\""}});
  std::map<std::string, std::string> metadata = load_safetensors_metadata(path);
  EXPECT_EQ(metadata.size(), 4u);
  EXPECT_EQ(metadata.at("format"), "pt");
  EXPECT_EQ(metadata.at("step"), "100");
  EXPECT_EQ(metadata.at("note"), "caf\xc3\xa9\n\"x\"");
  EXPECT_EQ(
      metadata.at("tensorplay.structure"),
      R"({"version":1,"root":{"type":"dict","items":[[{"type":"str","value":"w"},{"type":"tensor","name":"w"}]]}})");
  std::filesystem::remove(path);
}

TEST(Safetensors, SaveRejectsWhatPythonCouldNotLoadTheSame) {
  std::string path = temp_path("rejected.safetensors");
  Tensor t = ones({1});
  expect_error([&] { save_safetensors({{"a", t}, {"a", t}}, path); }, ErrorKind::Value, {"duplicate tensor name 'a'"});
  expect_error([&] { save_safetensors({{"__metadata__", t}}, path); }, ErrorKind::Value, {"reserved"});
  expect_error([&] { save_safetensors({{"bad\xff", t}}, path); }, ErrorKind::Value, {"not valid UTF-8"});
  expect_error([&] { save_safetensors({{"u", Tensor()}}, path); }, ErrorKind::Value, {"tensor 'u' is undefined"});
  expect_error([&] { save_safetensors({{"c", complex(t, t)}}, path); }, ErrorKind::Type,
               {"tensor 'c' has unsupported dtype complex64"});
  expect_error([&] { save_safetensors({{"m", empty({2}, {}, Device("meta"))}}, path); }, ErrorKind::Value,
               {"meta device"});
  expect_error([&] { save_safetensors({{"w", t}}, path, {{"format", "np"}}); }, ErrorKind::Value,
               {"metadata key 'format' is reserved"});
  expect_error([&] { save_safetensors({{"w", t}}, path, {{"tensorplay.structure", "{}"}}); }, ErrorKind::Value,
               {"reserved"});
  // The header holds a name 3 times (twice in the structure entry): 3 x 34 MB is more than readers accept.
  expect_error([&] { save_safetensors({{std::string(34'000'000, 'a'), t}}, path); }, ErrorKind::Value,
               {"over the limit of 100000000"});
  EXPECT_FALSE(std::filesystem::exists(path));
  expect_error([&] { save_safetensors({{"w", t}}, temp_path("missing_dir/w.safetensors")); }, ErrorKind::Runtime,
               {"[save_safetensors]", "missing_dir"});
  expect_error([&] { load_safetensors(temp_path("missing.safetensors")); }, ErrorKind::Runtime,
               {"[load_safetensors] can't open", "missing.safetensors"});
}

TEST(Safetensors, SaveReplacesTheFileAtomically) {
  namespace fs = std::filesystem;
  fs::path dir = temp_path("atomic_dir");
  fs::create_directories(dir);
  std::string path = (dir / "w.safetensors").string();
  write_bytes(path, "old");
  fs::create_symlink("w.safetensors", dir / "link.safetensors");
  // Through a link the file it points to is replaced, not the link.
  save_safetensors({{"w", ones({2})}}, (dir / "link.safetensors").string());
  EXPECT_TRUE(fs::is_symlink(dir / "link.safetensors"));
  expect_same(load_safetensors(path), {{"w", ones({2})}});
  // A failed save leaves the previous file, and no temporary file behind.
  EXPECT_THROW(save_safetensors({{"w", ones({1})}, {"w", ones({1})}}, path), Error);
  expect_same(load_safetensors(path), {{"w", ones({2})}});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
  fs::remove_all(dir);
}

struct CorruptCase {
  const char* what;
  std::string bytes;
  const char* message;
};

std::string entry(std::string_view name, std::string_view fields) {
  return "{\"" + std::string(name) + "\":{" + std::string(fields) + "}}";
}

std::vector<CorruptCase> corrupt_cases() {
  const std::string f32x1 = std::string("\x00\x00\x80\x3f", 4);
  std::string huge_len(8, '\0');
  huge_len[7] = '\x7f';
  std::string ones65 = "[1";
  for (int i = 0; i < 64; ++i) ones65 += ",1";
  ones65 += "]";
  return {
      {"empty file", "", "the file is truncated: expected 8 bytes of the header length, got 0"},
      {"short length", std::string("\x10\x00\x00", 3),
       "the file is truncated: expected 8 bytes of the header length, got 3"},
      {"huge header length", huge_len + "{}", "header length 9151314442816847872 exceeds the limit of 100000000 bytes"},
      {"header past the end", file_with("{}").substr(0, 9), "header length 2 is larger than the file (9 bytes)"},
      {"not UTF-8", file_with("{\"a\xff\":1}"), "the header is not valid UTF-8: can't decode byte 0xff in position 3"},
      {"bad JSON", file_with(R"({"a":})"), "the header is not valid JSON: expecting value at byte 5"},
      {"trailing JSON", file_with("{} x"), "the header is not valid JSON: extra data at byte 3"},
      {"NUL padding", file_with(std::string("{}\0", 3)), "the header is not valid JSON: extra data at byte 2"},
      {"NaN", file_with(R"({"__metadata__":{"a":NaN}})"), "the header is not valid JSON: expecting value"},
      {"unterminated", file_with(R"({"a)"), "the header is not valid JSON: unterminated string"},
      {"control character", file_with("{\"a\nb\":1}"), "invalid control character"},
      {"lone surrogate", file_with(R"({"\ud800":1})"), "lone surrogate"},
      {"bad escape", file_with(R"({"\x41":1})"), "invalid escape"},
      {"leading zero", file_with(R"({"a":01})"), "not valid JSON"},
      {"deep nesting", file_with(std::string(1000, '[') + std::string(1000, ']')), "the header is nested too deeply"},
      {"duplicate key", file_with(R"({"a":1,"a":2})"), "the header is not valid JSON: duplicate key 'a'"},
      {"not an object", file_with("[1]"), "the header must be a JSON object, not list"},
      {"metadata not strings", file_with(R"({"__metadata__":{"a":1}})"),
       "__metadata__ must be an object mapping strings to strings"},
      {"entry not an object", file_with(R"({"w":[1]})"), "the header entry for 'w' must be an object, not list"},
      {"extra field", file_with(entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1)"), f32x1),
       "the header entry for 'w' must have exactly the fields dtype, shape and data_offsets, not "
       "['data_offsets', 'dtype', 'shape', 'x']"},
      {"missing field", file_with(entry("w", R"("dtype":"F32","shape":[1])")),
       "must have exactly the fields dtype, shape and data_offsets, not ['dtype', 'shape']"},
      {"unknown dtype", file_with(entry("w", R"("dtype":"F8","shape":[1],"data_offsets":[0,1])"), "x"),
       "tensor 'w' has unknown dtype 'F8'"},
      {"complex dtype", file_with(entry("w", R"("dtype":"C64","shape":[1],"data_offsets":[0,8])")),
       "tensor 'w' has unknown dtype 'C64'"},
      {"dtype not a string", file_with(entry("w", R"("dtype":4,"shape":[1],"data_offsets":[0,4])")),
       "tensor 'w' has unknown dtype 4"},
      {"negative dim", file_with(entry("w", R"("dtype":"F32","shape":[-1],"data_offsets":[0,4])")),
       "tensor 'w' has invalid shape [-1]: expected a list of at most 64 non-negative integers"},
      {"float dim", file_with(entry("w", R"("dtype":"F32","shape":[1.0],"data_offsets":[0,4])")),
       "tensor 'w' has invalid shape [1.0]"},
      {"bool dim", file_with(entry("w", R"("dtype":"F32","shape":[true],"data_offsets":[0,4])")),
       "tensor 'w' has invalid shape [True]"},
      {"too many dims", file_with(entry("w", R"("dtype":"F32","shape":)" + ones65 + R"(,"data_offsets":[0,4])")),
       "tensor 'w' has invalid shape [1, 1, 1,"},
      {"shape overflow", file_with(entry("w", R"("dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0])")),
       "tensor 'w' has shape [4611686018427387904, 4], too large to index"},
      {"dim beyond int64", file_with(entry("w", R"("dtype":"U8","shape":[99999999999999999999],"data_offsets":[0,0])")),
       "tensor 'w' has shape [99999999999999999999], too large to index"},
      {"empty but huge", file_with(entry("w", R"("dtype":"F64","shape":[0,2305843009213693952],"data_offsets":[0,0])")),
       "too large to index"},
      {"one offset", file_with(entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0])")),
       "tensor 'w' has invalid data_offsets [0]: expected [begin, end] with 0 <= begin <= end"},
      {"reversed offsets", file_with(entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[4,0])")),
       "tensor 'w' has invalid data_offsets [4, 0]"},
      {"negative offset", file_with(entry("w", R"("dtype":"F32","shape":[0],"data_offsets":[-4,-4])")),
       "tensor 'w' has invalid data_offsets [-4, -4]"},
      {"offsets beyond int64",
       file_with(entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,99999999999999999999])")),
       "data_offsets [0, 99999999999999999999] lie beyond any file"},
      {"span mismatch", file_with(entry("w", R"("dtype":"F32","shape":[2],"data_offsets":[0,4])"), f32x1),
       "tensor 'w' of dtype F32 and shape [2] needs 8 bytes, but its data_offsets [0, 4] span 4"},
      {"data past the end", file_with(entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,4])"), "ab"),
       "the data section is 2 bytes, but the header describes 4"},
      {"trailing bytes", file_with(entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,4])"), f32x1 + "xy"),
       "the data section is 6 bytes, but the header describes 4"},
      {"not from 0", file_with(entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[4,8])"), f32x1 + f32x1),
       "tensor 'w' starts at offset 4, expected 0: it leaves a gap before it"},
      {"overlap",
       file_with(
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"I16","shape":[2],"data_offsets":[2,6]}})",
           f32x1 + f32x1),
       "tensor 'b' starts at offset 2, expected 4: it overlaps the previous tensor"},
      {"shared bytes",
       file_with(
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
           f32x1),
       "tensor 'b' starts at offset 0, expected 4: it overlaps the previous tensor"},
      {"gap",
       file_with(
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
           f32x1 + f32x1 + f32x1),
       "tensor 'b' starts at offset 8, expected 4: it leaves a gap before it"},
      {"bool byte",
       file_with(entry("m", R"("dtype":"BOOL","shape":[2],"data_offsets":[0,2])"), std::string("\x01\x02", 2)),
       "bool tensor 'm' holds bytes other than 0 and 1"},
  };
}

TEST(Safetensors, CorruptFilesRaiseValueErrorsNamingTheFileAndTheProblem) {
  std::string path = temp_path("corrupt.safetensors");
  for (const CorruptCase& c : corrupt_cases()) {
    SCOPED_TRACE(c.what);
    write_bytes(path, c.bytes);
    expect_error([&] { load_safetensors(path); }, ErrorKind::Value, {"[load_safetensors] " + path + ": ", c.message});
  }
  std::filesystem::remove(path);
}

// Every truncation of a valid file, and every byte of it set to a few values: each load either
// succeeds or raises tp::Error, and never reads out of bounds or crashes.
TEST(Safetensors, MutatedFilesLoadOrRaiseButNeverCrash) {
  std::string path = temp_path("mutated.safetensors");
  std::string valid = from_hex(kPythonNested);
  for (size_t n = 0; n < valid.size(); ++n) {
    write_bytes(path, std::string_view(valid).substr(0, n));
    EXPECT_THROW(load_safetensors(path), Error) << "truncated to " << n;
  }
  int loaded = 0;
  for (size_t i = 0; i < valid.size(); ++i) {
    for (char byte : {'\0', '\xff', '"', '9'}) {
      std::string mutated = valid;
      mutated[i] = byte;
      write_bytes(path, mutated);
      try {
        loaded += load_safetensors(path).size() == 3;
      } catch (const Error&) {
      }
    }
  }
  EXPECT_GT(loaded, 0);  // bytes in the data section change values, not validity
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tp

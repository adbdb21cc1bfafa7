#pragma once
// A small strict JSON reader and writer, with the UTF-8 and Python-repr helpers around them, for
// safetensors.cpp: a safetensors header is JSON, and Debian's nlohmann-json is not a dependency we
// take. The reader is as strict as Python's json.loads with serialization.py's hooks, so a header
// fails here where it fails there, and the repr helpers let messages match Python's word for word.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tp::serialize::json {

// Where reprs in messages are cut short, as Python's _short cuts them.
inline constexpr size_t kShortLimit = 200;

// The position of the first byte that is not valid UTF-8, or npos. Strict as Python's decoder: no
// overlong forms, no surrogates, nothing above U+10FFFF.
size_t invalid_utf8_at(std::string_view s);

// s (valid UTF-8) as a JSON string, escaped as Python's json.dumps does: with ensure_ascii, every
// character outside ' '..'~' as \uXXXX (surrogate pairs above the BMP); without, only the quote,
// the backslash and control characters. The header is written without, the structure with.
std::string json_string(std::string_view s, bool ensure_ascii);

struct Json {
  enum class Kind { Null, Bool, Int, Float, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::optional<int64_t> integer;  // an Int's value, when it fits
  std::string text;                // a String's value; a number as written
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  const Json* find(std::string_view key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

// Python's type names, for messages that say what was found instead.
std::string_view type_name(const Json& v);

// Appends Python's repr of the str s.
void repr_string(std::string_view s, std::string& out);

// Appends Python's repr of the decoded value, stopping once out passes limit: a 100 MB header must
// not make a 100 MB message.
void repr_to(const Json& v, std::string& out, size_t limit);

// A repr, cut short as Python's _short does (at a character boundary).
std::string cut_short(std::string text);
std::string short_repr(const Json& v);
std::string short_repr(std::string_view s);

// Parses text as strict JSON (RFC 8259), as Python's json.loads reads it with the reader's hooks:
// duplicate keys and NaN/Infinity are errors, control characters in strings too. Lone surrogates,
// which Python would decode into a str that has no UTF-8 form, are errors here. text must be valid
// UTF-8 already. Errors raise ValueError reading "<prefix><what> is not valid JSON: ...".
Json parse(std::string_view text, std::string prefix, std::string what);

}  // namespace tp::serialize::json

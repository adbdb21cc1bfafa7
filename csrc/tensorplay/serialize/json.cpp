#include "tensorplay/serialize/json.h"

#include <charconv>
#include <cstdio>
#include <unordered_set>

#include "tensorplay/core/error.h"

namespace tp::serialize::json {
namespace {

// A valid header nests 3 levels; the limit only keeps the recursive parser off the stack's end.
constexpr int kMaxJsonDepth = 100;

// The length of the valid UTF-8 sequence at s[i], or 0; strict as Python's decoder: no overlong
// forms, no surrogates, nothing above U+10FFFF.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

uint32_t decode_utf8(std::string_view s, size_t i, size_t n) {
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[k])); };
  if (n == 1) return byte(i);
  uint32_t cp = byte(i) & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (byte(i + k) & 0x3F);
  return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void append_u_escape(std::string& out, uint32_t unit) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", unit);
  out += buf;
}

}  // namespace

size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string json_string(std::string_view s, bool ensure_ascii) {
  std::string out = "\"";
  auto plain = [](char c) { return c >= 0x20 && c <= 0x7E && c != '"' && c != '\\'; };
  for (size_t i = 0; i < s.size();) {
    if (plain(s[i])) {  // runs of printable ASCII, most of any name, are copied whole
      size_t end = i;
      while (end < s.size() && plain(s[end])) ++end;
      out.append(s.substr(i, end - i));
      i = end;
      continue;
    }
    size_t n = utf8_sequence_length(s, i);
    uint32_t cp = decode_utf8(s, i, n);
    i += n;
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (cp < 0x20 || (ensure_ascii && cp > 0x7E)) {
      if (cp >= 0x10000) {
        append_u_escape(out, 0xD800 + ((cp - 0x10000) >> 10));
        append_u_escape(out, 0xDC00 + ((cp - 0x10000) & 0x3FF));
      } else {
        append_u_escape(out, cp);
      }
    } else {
      append_utf8(out, cp);
    }
  }
  return out + "\"";
}

std::string_view type_name(const Json& v) {
  switch (v.kind) {
    case Json::Kind::Null:
      return "NoneType";
    case Json::Kind::Bool:
      return "bool";
    case Json::Kind::Int:
      return "int";
    case Json::Kind::Float:
      return "float";
    case Json::Kind::String:
      return "str";
    case Json::Kind::Array:
      return "list";
    case Json::Kind::Object:
      return "dict";
  }
  return "?";
}

void repr_string(std::string_view s, std::string& out) {
  // Python's choice of quotes: single, unless only a single quote appears.
  char quote = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (ch == quote || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += quote;
}

void repr_to(const Json& v, std::string& out, size_t limit) {
  if (out.size() > limit) return;
  switch (v.kind) {
    case Json::Kind::Null:
      out += "None";
      return;
    case Json::Kind::Bool:
      out += v.boolean ? "True" : "False";
      return;
    case Json::Kind::Int:
      out += v.integer ? std::to_string(*v.integer) : v.text;
      return;
    case Json::Kind::Float:
      out += v.text;
      return;
    case Json::Kind::String:
      repr_string(v.text, out);
      return;
    case Json::Kind::Array:
      out += '[';
      for (size_t i = 0; i < v.items.size() && out.size() <= limit; ++i) {
        if (i) out += ", ";
        repr_to(v.items[i], out, limit);
      }
      out += ']';
      return;
    case Json::Kind::Object:
      out += '{';
      for (size_t i = 0; i < v.members.size() && out.size() <= limit; ++i) {
        if (i) out += ", ";
        repr_string(v.members[i].first, out);
        out += ": ";
        repr_to(v.members[i].second, out, limit);
      }
      out += '}';
      return;
  }
}

std::string cut_short(std::string text) {
  if (text.size() <= kShortLimit) return text;
  size_t end = kShortLimit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}
std::string short_repr(const Json& v) {
  std::string out;
  repr_to(v, out, kShortLimit);
  return cut_short(std::move(out));
}
std::string short_repr(std::string_view s) {
  std::string out;
  repr_string(s.substr(0, 4 * kShortLimit), out);
  return cut_short(std::move(out));
}

namespace {

class JsonParser {
 public:
  JsonParser(std::string_view text, std::string prefix, std::string what)
      : s_(text), prefix_(std::move(prefix)), what_(std::move(what)) {}

  Json parse() {
    skip_ws();
    Json v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("extra data");
    return v;
  }

 private:
  [[noreturn]] void fail(std::string_view problem) {
    detail::fail(ErrorKind::Value, prefix_, what_, " is not valid JSON: ", problem, " at byte ", pos_);
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const char* problem) {
    if (peek() != c || at_end()) fail(problem);
    ++pos_;
  }

  Json value(int depth) {
    if (depth > kMaxJsonDepth) detail::fail(ErrorKind::Value, prefix_, what_, " is nested too deeply");
    Json v;
    char c = peek();
    if (at_end()) fail("expecting value");
    if (c == '{') {
      object(v, depth);
    } else if (c == '[') {
      array(v, depth);
    } else if (c == '"') {
      v.kind = Json::Kind::String;
      v.text = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(v);
    } else if (literal("true")) {
      v.kind = Json::Kind::Bool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = Json::Kind::Bool;
    } else if (literal("null")) {
      v.kind = Json::Kind::Null;
    } else {
      fail("expecting value");
    }
    return v;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  void object(Json& v, int depth) {
    v.kind = Json::Kind::Object;
    ++pos_;
    skip_ws();
    if (peek() == '}' && !at_end()) {
      ++pos_;
      return;
    }
    std::unordered_set<std::string> keys;
    while (true) {
      skip_ws();
      if (peek() != '"' || at_end()) fail("expecting property name enclosed in double quotes");
      size_t key_pos = pos_;
      std::string key = string();
      if (!keys.insert(key).second) {
        pos_ = key_pos;
        fail("duplicate key " + short_repr(key));
      }
      skip_ws();
      expect(':', "expecting ':' delimiter");
      skip_ws();
      Json member = value(depth + 1);
      v.members.emplace_back(std::move(key), std::move(member));
      skip_ws();
      if (peek() == ',' && !at_end()) {
        ++pos_;
        continue;
      }
      expect('}', "expecting ',' delimiter");
      return;
    }
  }

  void array(Json& v, int depth) {
    v.kind = Json::Kind::Array;
    ++pos_;
    skip_ws();
    if (peek() == ']' && !at_end()) {
      ++pos_;
      return;
    }
    while (true) {
      skip_ws();
      v.items.push_back(value(depth + 1));
      skip_ws();
      if (peek() == ',' && !at_end()) {
        ++pos_;
        continue;
      }
      expect(']', "expecting ',' delimiter");
      return;
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("invalid \\uXXXX escape");
    uint32_t unit = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[pos_ + k];
      unit <<= 4;
      if (c >= '0' && c <= '9') {
        unit |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        unit |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        unit |= c - 'A' + 10;
      } else {
        fail("invalid \\uXXXX escape");
      }
    }
    pos_ += 4;
    return unit;
  }

  // The text is valid UTF-8 already (checked before parsing), so other bytes are copied as they are.
  std::string string() {
    ++pos_;
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("invalid control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      ++pos_;
      char e = peek();
      if (at_end()) fail("unterminated string");
      ++pos_;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(pos_, 2) != "\\u") fail("lone surrogate in a \\u escape");
            pos_ += 2;
            uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("lone surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail("invalid escape");
      }
    }
  }

  void number(Json& v) {
    size_t start = pos_;
    auto digits = [&] {
      size_t first = pos_;
      while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - first;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0' && !at_end()) {
      ++pos_;
    } else if (digits() == 0) {
      pos_ = start;
      fail("expecting value");
    }
    bool is_float = false;
    if (peek() == '.' && !at_end()) {
      ++pos_;
      if (digits() == 0) fail("expecting digits after the decimal point");
      is_float = true;
    }
    if ((peek() == 'e' || peek() == 'E') && !at_end()) {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) fail("expecting digits in the exponent");
      is_float = true;
    }
    v.text = std::string(s_.substr(start, pos_ - start));
    v.kind = is_float ? Json::Kind::Float : Json::Kind::Int;
    if (!is_float) {
      int64_t value;
      auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), value);
      if (ec == std::errc() && end == v.text.data() + v.text.size()) v.integer = value;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string prefix_;
  std::string what_;
};

}  // namespace

Json parse(std::string_view text, std::string prefix, std::string what) {
  return JsonParser(text, std::move(prefix), std::move(what)).parse();
}

}  // namespace tp::serialize::json

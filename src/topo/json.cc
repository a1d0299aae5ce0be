#include "topo/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xc::topo::json {

const char *kind_name(Kind k) {
  switch (k) {
    case Kind::kNull: return "null";
    case Kind::kBool: return "a boolean";
    case Kind::kNumber: return "a number";
    case Kind::kString: return "a string";
    case Kind::kArray: return "an array";
    case Kind::kObject: return "an object";
  }
  return "?";
}

const Value *Value::get(const std::string &key) const {
  for (const auto &m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(const std::string &text) : s_(text) {}

  Status document(Value *out) {
    skip_space();
    XC_TRY(value(out, 0));
    skip_space();
    if (pos_ < s_.size()) return fail("unexpected " + describe_here() + " after the end of the document");
    return Status::Ok();
  }

 private:
  const std::string &s_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;

  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }

  Status fail(const std::string &message) const {
    return Error(XC_ERR_INVALID_ARGUMENT, "line %d, column %d: %s", line_, column(), message.c_str());
  }

  // What is at the current position, for messages: "'x'", "end of input".
  std::string describe_here() const {
    if (pos_ >= s_.size()) return "end of input";
    unsigned char c = static_cast<unsigned char>(s_[pos_]);
    char buf[32];
    if (c >= 0x20 && c < 0x7f)
      snprintf(buf, sizeof buf, "'%c'", c);
    else
      snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }

  void skip_space() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  bool literal(const char *word) {
    size_t n = strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  Status value(Value *out, int depth) {
    out->line = line_;
    out->column = column();
    if (pos_ >= s_.size()) return fail("expected a value, found end of input");
    char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxDepth) return fail("nesting deeper than 64 levels");
      return c == '{' ? object(out, depth + 1) : array(out, depth + 1);
    }
    if (c == '"') {
      out->kind = Kind::kString;
      return string(&out->text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number_literal(out);
    if (literal("true")) {
      out->kind = Kind::kBool;
      out->boolean = true;
      return Status::Ok();
    }
    if (literal("false")) {
      out->kind = Kind::kBool;
      out->boolean = false;
      return Status::Ok();
    }
    if (literal("null")) {
      out->kind = Kind::kNull;
      return Status::Ok();
    }
    return fail("expected a value, found " + describe_here());
  }

  Status object(Value *out, int depth) {
    out->kind = Kind::kObject;
    ++pos_;  // '{'
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return Status::Ok();
    }
    for (;;) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"')
        return fail("expected a member name in double quotes, found " + describe_here());
      int key_line = line_, key_column = column();
      std::string key;
      XC_TRY(string(&key));
      for (const auto &m : out->members)
        if (m.first == key)
          return Error(XC_ERR_INVALID_ARGUMENT, "line %d, column %d: duplicate member \"%s\"", key_line, key_column,
                       key.c_str());
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ':')
        return fail("expected ':' after member name \"" + key + "\", found " + describe_here());
      ++pos_;
      skip_space();
      out->members.emplace_back(std::move(key), Value());
      XC_TRY(value(&out->members.back().second, depth));
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return Status::Ok();
      }
      return fail("expected ',' or '}' in an object, found " + describe_here());
    }
  }

  Status array(Value *out, int depth) {
    out->kind = Kind::kArray;
    ++pos_;  // '['
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return Status::Ok();
    }
    for (;;) {
      skip_space();
      out->items.emplace_back();
      XC_TRY(value(&out->items.back(), depth));
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return Status::Ok();
      }
      return fail("expected ',' or ']' in an array, found " + describe_here());
    }
  }

  Status number_literal(Value *out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t n = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_, ++n;
      return n;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') return fail("a number may not start with 0");
    } else if (digits() == 0) {
      return fail("expected a digit, found " + describe_here());
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return fail("expected a digit after '.', found " + describe_here());
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return fail("expected a digit in the exponent, found " + describe_here());
    }
    out->kind = Kind::kNumber;
    out->text = s_.substr(start, pos_ - start);
    return Status::Ok();
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  Status hex4(unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      if (pos_ >= s_.size() || hex_value(s_[pos_]) < 0)
        return fail("expected 4 hex digits after \\u, found " + describe_here());
      v = v * 16 + static_cast<unsigned>(hex_value(s_[pos_++]));
    }
    *out = v;
    return Status::Ok();
  }

  static void put_utf8(unsigned cp, std::string *out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // At an opening '"'. Raw bytes >= 0x80 pass through unchanged (the file is
  // taken to be UTF-8); control characters must be escaped, as RFC 8259 says.
  Status string(std::string *out) {
    ++pos_;
    out->clear();
    for (;;) {
      if (pos_ >= s_.size()) return fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return Status::Ok();
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string (escape it)");
      if (c != '\\') {
        *out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) return fail("unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          unsigned cp;
          XC_TRY(hex4(&cp));
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (s_.compare(pos_, 2, "\\u") != 0) return fail("a high surrogate must be followed by \\u and a low one");
            pos_ += 2;
            XC_TRY(hex4(&lo));
            if (lo < 0xDC00 || lo > 0xDFFF) return fail("invalid low surrogate after a high one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("a low surrogate without a high one");
          }
          put_utf8(cp, out);
          break;
        }
        default:
          --pos_;
          return fail("invalid escape \\" + std::string(1, e));
      }
    }
  }
};

}  // namespace

Status parse(const std::string &text, Value *out) {
  Value v;
  XC_TRY(Parser(text).document(&v));
  *out = std::move(v);
  return Status::Ok();
}

Status error_at(const Value &v, const std::string &what, const std::string &message) {
  return Error(XC_ERR_INVALID_ARGUMENT, "line %d, column %d: %s: %s", v.line, v.column, what.c_str(),
               message.c_str());
}

namespace {
Status expected(const Value &v, const std::string &what, const char *type) {
  return error_at(v, what, std::string("expected ") + type + ", found " + kind_name(v.kind));
}
}  // namespace

Status get_string(const Value &v, const std::string &what, std::string *out) {
  if (v.kind != Kind::kString) return expected(v, what, "a string");
  *out = v.text;
  return Status::Ok();
}

Status get_bool(const Value &v, const std::string &what, bool *out) {
  if (v.kind != Kind::kBool) return expected(v, what, "true or false");
  *out = v.boolean;
  return Status::Ok();
}

Status get_int(const Value &v, const std::string &what, int *out) {
  if (v.kind != Kind::kNumber) return expected(v, what, "an integer");
  errno = 0;
  char *end = nullptr;
  long long n = strtoll(v.text.c_str(), &end, 10);
  if (*end != '\0') return error_at(v, what, "expected an integer, found " + v.text);
  if (errno == ERANGE || n < INT32_MIN || n > INT32_MAX) return error_at(v, what, v.text + " is out of range");
  *out = static_cast<int>(n);
  return Status::Ok();
}

Status get_u64(const Value &v, const std::string &what, uint64_t *out) {
  if (v.kind != Kind::kNumber) return expected(v, what, "a non-negative integer");
  if (v.text[0] == '-') return error_at(v, what, "expected a non-negative integer, found " + v.text);
  errno = 0;
  char *end = nullptr;
  unsigned long long n = strtoull(v.text.c_str(), &end, 10);
  if (*end != '\0') return error_at(v, what, "expected an integer, found " + v.text);
  if (errno == ERANGE) return error_at(v, what, v.text + " is out of range");
  *out = static_cast<uint64_t>(n);
  return Status::Ok();
}

Status get_double(const Value &v, const std::string &what, double *out) {
  if (v.kind != Kind::kNumber) return expected(v, what, "a number");
  errno = 0;
  char *end = nullptr;
  double d = strtod(v.text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(d)) return error_at(v, what, v.text + " is not a finite number");
  *out = d;
  return Status::Ok();
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string number(double d) {
  if (!std::isfinite(d)) return "0";  // JSON has no NaN or infinity; estimates are always finite
  char buf[40];
  // The shortest of %.15g and %.17g that reads back as the same double.
  snprintf(buf, sizeof buf, "%.15g", d);
  if (strtod(buf, nullptr) != d) snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

}  // namespace xc::topo::json

// A small JSON reader and writer for topology files: no external library.
// The reader builds a tree whose every value remembers its line and column,
// so that both syntax errors and later type errors can say where they are.
// Numbers are kept as their literal text and converted by the caller to the
// type it needs, so 64-bit integers survive exactly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace xc::topo::json {

enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
const char *kind_name(Kind k);  // "null", "a boolean", "a number", ...

struct Value {
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;                                   // a string's value or a number's literal
  std::vector<Value> items;                           // array
  std::vector<std::pair<std::string, Value>> members;  // object, in file order, keys unique
  int line = 0, column = 0;                           // where the value starts (1-based)

  // The member named key of an object, or nullptr.
  const Value *get(const std::string &key) const;
};

// Parses one JSON document (RFC 8259: nothing but whitespace after it,
// duplicate keys refused, nesting at most 64 deep). On failure the status is
// XC_ERR_INVALID_ARGUMENT with "line L, column C: what was wrong".
Status parse(const std::string &text, Value *out);

// Typed readers of a value; `what` names it in the error ("gpus[2].index").
// Errors are XC_ERR_INVALID_ARGUMENT with "line L, column C: what: ...".
Status get_string(const Value &v, const std::string &what, std::string *out);
Status get_bool(const Value &v, const std::string &what, bool *out);
Status get_int(const Value &v, const std::string &what, int *out);
Status get_u64(const Value &v, const std::string &what, uint64_t *out);
Status get_double(const Value &v, const std::string &what, double *out);
// An error about v: "line L, column C: what: message".
Status error_at(const Value &v, const std::string &what, const std::string &message);

// Writer helpers: a quoted, escaped string; a double that reads back exactly.
std::string quote(const std::string &s);
std::string number(double d);

}  // namespace xc::topo::json

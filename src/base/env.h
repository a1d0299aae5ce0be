// The one registry of XC_* environment variables. Every variable xcomm reads
// is declared in env.cc with its type, its default and a doc line; reading
// one that is not declared is a programming error caught by env_get. A set
// variable whose value its type does not accept is an error naming the
// variable, the value and what it accepts, never a silent default:
// xc_init and xc_comm_init_rank check every set variable first
// (env_check_all), and the typed getters check again where they read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace xc {

enum class EnvType {
  kText,    // anything (paths, names, lists the reader parses)
  kInt,     // a decimal integer in [min, max]
  kBytes,   // the same, with an optional k, M or G suffix (KiB, MiB, GiB)
  kFlag,    // 0 or 1
  kChoice,  // one of the words in choices, separated by '|' (any case)
};

struct EnvVar {
  const char *name;
  const char *default_value;  // as text; "" means unset (the reader decides)
  EnvType type;
  const char *doc;
  int64_t min = 0, max = INT64_MAX;  // kInt, kBytes
  const char *choices = "";          // kChoice
};

// All declared variables, in the order xc-info prints them.
const std::vector<EnvVar> &env_registry();

// The value of a declared variable as text, or its default when unset.
std::string env_get(const char *name);
// True when the variable is set in the environment (declared or not).
bool env_is_set(const char *name);

// Typed reads of a declared variable of that type: its value, or its
// default when unset. XC_ERR_INVALID_ARGUMENT when the value is not one its
// type accepts (and for kInt/kBytes/kFlag variables without a default, when
// unset: ask env_is_set first).
Status env_int(const char *name, int64_t *out);  // kInt, kBytes, kFlag
Status env_flag(const char *name, bool *out);    // kFlag
// kChoice: the choice as the registry spells it.
Status env_choice(const char *name, std::string *out);

// Every declared variable that is set, checked against its type: the first
// bad one's error. An XC_ variable the registry does not know is logged as a
// warning (a misspelt name would otherwise be ignored in silence).
Status env_check_all();
// What v accepts, for messages and xc-info ("a byte count from 65536 to ...").
std::string env_accepts(const EnvVar &v);

}  // namespace xc

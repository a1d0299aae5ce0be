// The one registry of XC_* environment variables. Every variable xcomm reads
// is declared in env.cc with its default and a doc line; reading one that is
// not declared is a programming error caught by env_get.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xc {

struct EnvVar {
  const char *name;
  const char *default_value;  // as text; "" means unset
  const char *doc;
};

// All declared variables, in the order xc-info prints them.
const std::vector<EnvVar> &env_registry();

// The value of a declared variable, or its default when unset.
std::string env_get(const char *name);
// Integer value (accepts k/K, m/M, g/G suffixes); default when unset or malformed.
int64_t env_get_int(const char *name);
// True when the variable is set in the environment (declared or not).
bool env_is_set(const char *name);

}  // namespace xc

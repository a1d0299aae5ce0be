// The XC_* registry: every declared variable has a type; a set value its
// type does not accept is an error naming the variable, the value and what
// it takes, never a silent default.
#include "unit_test.h"

#include <cstdlib>
#include <string>

#include "base/env.h"

namespace {

using xc::Status;

struct Scoped {  // sets a variable for one test, restores it after
  const char *name;
  std::string old;
  bool had;
  Scoped(const char *n, const char *value) : name(n), had(getenv(n) != nullptr) {
    if (had) old = getenv(n);
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~Scoped() {
    if (had)
      setenv(name, old.c_str(), 1);
    else
      unsetenv(name);
  }
};

void integers(void **) {
  int64_t v = 0;
  {
    Scoped s("XC_TIMEOUT", nullptr);
    ASSERT_OK(xc::env_int("XC_TIMEOUT", &v));
    assert_int_equal(v, 300000);  // the default
  }
  {
    Scoped s("XC_TIMEOUT", "2500");
    ASSERT_OK(xc::env_int("XC_TIMEOUT", &v));
    assert_int_equal(v, 2500);
  }
  // The case that used to give 300 s in silence.
  for (const char *bad : {"5s", "", "0", "-3", "1.5", " 7", "99999999999999999999"}) {
    Scoped s("XC_TIMEOUT", bad);
    v = 42;
    expect_error(xc::env_int("XC_TIMEOUT", &v), XC_ERR_INVALID_ARGUMENT,
                 ("XC_TIMEOUT='" + std::string(bad) + "' is not valid: it takes a whole number from 1 up").c_str());
    assert_int_equal(v, 42);  // output untouched
  }
}

void byte_counts(void **) {
  int64_t v = 0;
  struct {
    const char *text;
    int64_t want;
  } good[] = {{"65536", 65536}, {"64k", 64 << 10}, {"1M", 1 << 20}, {"2g", int64_t{2} << 30}};
  for (auto &g : good) {
    Scoped s("XC_SHM_RING_BYTES", g.text);
    ASSERT_OK(xc::env_int("XC_SHM_RING_BYTES", &v));
    assert_int_equal(v, g.want);
  }
  for (const char *bad : {"12q", "1kk", "k", "32k", "9999999999G"}) {  // 32k: below the 64 KiB minimum
    Scoped s("XC_SHM_RING_BYTES", bad);
    expect_error(xc::env_int("XC_SHM_RING_BYTES", &v), XC_ERR_INVALID_ARGUMENT, "a byte count from 65536 to");
  }
}

void flags_and_choices(void **) {
  bool f = false;
  {
    Scoped s("XC_SHM_COLL_CMA", "0");
    ASSERT_OK(xc::env_flag("XC_SHM_COLL_CMA", &f));
    assert_false(f);
  }
  {
    Scoped s("XC_SHM_COLL_CMA", "yes");
    expect_error(xc::env_flag("XC_SHM_COLL_CMA", &f), XC_ERR_INVALID_ARGUMENT, "XC_SHM_COLL_CMA='yes' is not valid: it takes 0 or 1");
  }
  std::string c;
  {
    Scoped s("XC_SHM_LARGE", "CMA");  // any case, given back as the registry spells it
    ASSERT_OK(xc::env_choice("XC_SHM_LARGE", &c));
    assert_string_equal(c.c_str(), "cma");
  }
  {
    Scoped s("XC_SHM_LARGE", "fast");
    expect_error(xc::env_choice("XC_SHM_LARGE", &c), XC_ERR_INVALID_ARGUMENT, "it takes one of copy/cma");
  }
}

void check_all(void **) {
  ASSERT_OK(xc::env_check_all());
  {
    Scoped s("XC_DEBUG", "LOUD");
    expect_error(xc::env_check_all(), XC_ERR_INVALID_ARGUMENT, "XC_DEBUG='LOUD' is not valid: it takes one of NONE/WARN/INFO/TRACE");
  }
  {
    Scoped s("XC_TIMEOUTT", "5");  // misspelt: warned about, not an error
    ASSERT_OK(xc::env_check_all());
  }
  // Every declared variable's default is one its type accepts.
  for (const xc::EnvVar &v : xc::env_registry()) {
    if (!v.default_value[0]) continue;
    Scoped s(v.name, v.default_value);
    ASSERT_OK(xc::env_check_all());
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(integers),
      cmocka_unit_test(byte_counts),
      cmocka_unit_test(flags_and_choices),
      cmocka_unit_test(check_all),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}

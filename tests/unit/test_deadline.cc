// Deadlines: a timeout too long to reach is "never", not "now". Adding
// milliseconds to steady_clock used to overflow from ~9.2e12 ms on, so
// XC_TIMEOUT=INT64_MAX (or a config's UINT64_MAX) failed xc_init at once.
#include "unit_test.h"

#include <chrono>
#include <cstdint>

#include "base/deadline.h"

namespace {

using xc::Deadline;
using std::chrono::hours;

// ms must give a deadline past 50 years from now, with the most time left.
void far_away(uint64_t ms) {
  Deadline d = Deadline::AfterMs(ms);
  assert_false(d.expired());
  assert_int_equal(d.remaining_ms(), 1 << 30);
  assert_int_equal(d.remaining_ms(20), 20);
  assert_true(d.at() > Deadline::Clock::now() + hours(24 * 365 * 50));
}

void huge_timeouts_never_expire(void **) {
  far_away(UINT64_MAX);
  far_away(INT64_MAX);
  far_away(UINT64_MAX / 2 + 1);
  far_away(9300000000000ull);  // the first values that wrapped into the past
  far_away(Deadline::kForeverMs);
  far_away(Deadline::kForeverMs - 1);
  // and from a start in the past (a group's requests count from its end)
  Deadline d = Deadline::AfterMs(UINT64_MAX, Deadline::Clock::now() - hours(1));
  assert_false(d.expired());
}

void ordinary_timeouts(void **) {
  assert_true(Deadline::AfterMs(0).expired());
  Deadline d = Deadline::AfterMs(60000);
  assert_false(d.expired());
  assert_true(d.remaining_ms() > 59000 && d.remaining_ms() <= 60000);
  assert_true(Deadline::AfterMs(1000, Deadline::Clock::now() - hours(1)).expired());
}

void saturating_arithmetic(void **) {
  assert_true(xc::sat_ms(300000, 4, 1000) == 1201000);
  assert_true(xc::sat_ms(UINT64_MAX, 4, 1000) == UINT64_MAX);  // wrapped to 996 before
  assert_true(xc::sat_ms(UINT64_MAX, 1, 1) == UINT64_MAX);
  assert_true(xc::sat_ms(UINT64_MAX - 5, 1, 5) == UINT64_MAX);
  assert_true(xc::sat_ms(INT64_MAX, 2, 1000) == UINT64_MAX);
  assert_true(xc::sat_ms(0, 0, 0) == 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(huge_timeouts_never_expire),
      cmocka_unit_test(ordinary_timeouts),
      cmocka_unit_test(saturating_arithmetic),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}

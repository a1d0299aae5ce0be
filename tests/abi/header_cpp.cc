// The public header alone must compile as C++ (-pedantic-errors -Werror) and
// keep C linkage.
#include "xcomm.h"

#include <type_traits>

static_assert(std::is_same<decltype(&xc_init), xc_result_t (*)(const xc_config_t *, xc_comm_t *)>::value,
              "xc_init keeps its signature");

int main() {
  xc_config_t cfg = XC_CONFIG_INIT;
  return cfg.device == XC_DEVICE_AUTO ? 0 : 1;
}

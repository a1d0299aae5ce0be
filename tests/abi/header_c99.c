/* The public header alone must compile as strict C99 (built with
   -std=c99 -pedantic-errors -Werror) and its constants must be usable. */
#include "xcomm.h"

int main(void) {
  xc_config_t cfg = XC_CONFIG_INIT;
  xc_status_t st = {XC_ANY_SOURCE, XC_ANY_TAG, XC_SUCCESS, 0, 0};
  (void)st;
  return (cfg.size == sizeof(xc_config_t) && cfg.version == XC_CONFIG_VERSION && XC_ABI_VERSION == 1) ? 0 : 1;
}

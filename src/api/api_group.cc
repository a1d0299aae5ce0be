// xc_group_start / xc_group_end.
#include "api/api_support.h"

XC_EXPORT xc_result_t xc_group_start(void) {
  return xc::api::finish("xc_group_start", xc::Error(XC_ERR_UNSUPPORTED, "groups are not built yet"));
}

XC_EXPORT xc_result_t xc_group_end(void) {
  return xc::api::finish("xc_group_end", xc::Error(XC_ERR_UNSUPPORTED, "groups are not built yet"));
}

// xc_group_start / xc_group_end (the batch itself: api/group.h).
#include "api/api_support.h"
#include "api/group.h"

XC_EXPORT xc_result_t xc_group_start(void) {
  XC_API_GUARD("xc_group_start", { return xc::api::finish("xc_group_start", xc::api::group_start()); })
}

XC_EXPORT xc_result_t xc_group_end(void) {
  // Errors of the batch already name their op.
  XC_API_GUARD("xc_group_end", { return xc::api::finish("xc_group_end", xc::api::group_end()); })
}

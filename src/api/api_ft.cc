// Entry points of fault tolerance: revoke, agree, get_failed, shrink, grow
// (runtime/ft.cc does the work). They take a revoked or aborted
// communicator: that is what they are for.
#include "api/api_support.h"

using xc::Error;
using xc::Status;
using xc::api::finish;

XC_EXPORT xc_result_t xc_comm_revoke(xc_comm_t comm) {
  XC_API_GUARD("xc_comm_revoke", {
    Status st = xc::check_comm(comm);
    if (st.ok()) st = xc::comm_revoke(comm);
    return finish("xc_comm_revoke", st);
  })
}

XC_EXPORT xc_result_t xc_comm_agree(xc_comm_t comm, int *flag) {
  XC_API_GUARD("xc_comm_agree", {
    Status st = xc::check_comm(comm);
    if (st.ok()) st = xc::comm_agree(comm, flag);
    return finish("xc_comm_agree", st);
  })
}

XC_EXPORT xc_result_t xc_comm_get_failed(xc_comm_t comm, int *n, int *ranks) {
  XC_API_GUARD("xc_comm_get_failed", {
    Status st = xc::check_comm(comm);
    if (st.ok()) st = xc::comm_get_failed(comm, n, ranks);
    return finish("xc_comm_get_failed", st);
  })
}

XC_EXPORT xc_result_t xc_comm_shrink(xc_comm_t comm, const xc_config_t *cfg, xc_comm_t *out) {
  XC_API_GUARD("xc_comm_shrink", {
    // A NULL out is checked inside, during the agreement, so every rank fails together.
    Status st = xc::check_comm(comm);
    if (st.ok()) st = xc::comm_shrink(comm, cfg, out);
    return finish("xc_comm_shrink", st);
  })
}

XC_EXPORT xc_result_t xc_comm_grow(xc_comm_t comm, int nnew, const xc_unique_id_t *id, const xc_config_t *cfg,
                                   xc_comm_t *out) {
  XC_API_GUARD("xc_comm_grow", {
    Status st = xc::check_usable(comm);
    if (st.ok()) st = xc::comm_grow(comm, nnew, id, cfg, out);
    return finish("xc_comm_grow", st);
  })
}

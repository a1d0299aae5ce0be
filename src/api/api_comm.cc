// Entry points that make, inspect and free communicators.
#include "api/api_support.h"
#include "runtime/trace_dump.h"

using xc::Error;
using xc::Status;
using xc::api::finish;

namespace {

// Validate comm and a non-NULL output pointer in one go.
Status check_query(xc_comm_t comm, const void *out, const char *what) {
  XC_TRY(xc::check_comm(comm));
  if (!out) return Error(XC_ERR_INVALID_ARGUMENT, "%s is NULL", what);
  return Status::Ok();
}

}  // namespace

XC_EXPORT xc_result_t xc_init(const xc_config_t *cfg, xc_comm_t *world) {
  XC_API_GUARD("xc_init", {
    if (!world) return finish("xc_init", Error(XC_ERR_INVALID_ARGUMENT, "world is NULL"));
    return finish("xc_init", xc::comm_init_world(cfg, world));
  })
}

XC_EXPORT xc_result_t xc_get_unique_id(xc_unique_id_t *id) {
  XC_API_GUARD("xc_get_unique_id", {
    if (!id) return finish("xc_get_unique_id", Error(XC_ERR_INVALID_ARGUMENT, "id is NULL"));
    return finish("xc_get_unique_id", xc::comm_get_unique_id(id));
  })
}

XC_EXPORT xc_result_t xc_comm_init_rank(int nranks, const xc_unique_id_t *id, int rank, const xc_config_t *cfg,
                                        xc_comm_t *comm) {
  XC_API_GUARD("xc_comm_init_rank", {
    if (!comm) return finish("xc_comm_init_rank", Error(XC_ERR_INVALID_ARGUMENT, "comm is NULL"));
    return finish("xc_comm_init_rank", xc::comm_init_rank(nranks, id, rank, cfg, comm));
  })
}

XC_EXPORT xc_result_t xc_comm_free(xc_comm_t comm) {
  XC_API_GUARD("xc_comm_free", {
    if (!comm) return xc::api::ok();
    Status st = xc::check_comm(comm);
    if (st.ok()) st = xc::comm_free(comm);
    return finish("xc_comm_free", st);
  })
}

XC_EXPORT xc_result_t xc_comm_abort(xc_comm_t comm) {
  XC_API_GUARD("xc_comm_abort", {
    Status st = xc::check_comm(comm);
    if (st.ok()) xc::comm_abort(comm);
    return finish("xc_comm_abort", st);
  })
}

XC_EXPORT xc_result_t xc_comm_rank(xc_comm_t comm, int *rank) {
  Status st = check_query(comm, rank, "rank");
  if (st.ok()) *rank = comm->rank;
  return finish("xc_comm_rank", st);
}

XC_EXPORT xc_result_t xc_comm_size(xc_comm_t comm, int *size) {
  Status st = check_query(comm, size, "size");
  if (st.ok()) *size = comm->size;
  return finish("xc_comm_size", st);
}

XC_EXPORT xc_result_t xc_comm_local_rank(xc_comm_t comm, int *rank) {
  Status st = check_query(comm, rank, "rank");
  if (st.ok()) *rank = comm->local_rank;
  return finish("xc_comm_local_rank", st);
}

XC_EXPORT xc_result_t xc_comm_local_size(xc_comm_t comm, int *size) {
  Status st = check_query(comm, size, "size");
  if (st.ok()) *size = comm->local_size;
  return finish("xc_comm_local_size", st);
}

XC_EXPORT xc_result_t xc_comm_get_async_error(xc_comm_t comm, xc_result_t *err) {
  XC_API_GUARD("xc_comm_get_async_error", {
    Status st = check_query(comm, err, "err");
    if (st.ok()) *err = xc::comm_async_error(comm);
    return finish("xc_comm_get_async_error", st);
  })
}

XC_EXPORT xc_result_t xc_comm_trace_dump(xc_comm_t comm, const char *path) {
  XC_API_GUARD("xc_comm_trace_dump", {
    // Any valid handle: a broken, aborted or revoked communicator is what one dumps.
    Status st = xc::check_comm(comm);
    if (st.ok()) {
      std::string file = path ? std::string(path) : xc::trace_default_path(comm);
      if (file.empty())
        st = Error(XC_ERR_INVALID_ARGUMENT, "path is NULL and XC_TRACE_DIR is not set: no file to write the trace to");
      else
        st = xc::trace_dump(comm, file, "request");
    }
    return finish("xc_comm_trace_dump", st);
  })
}

XC_EXPORT xc_result_t xc_comm_split(xc_comm_t parent, int color, int key, const xc_config_t *cfg, xc_comm_t *out) {
  XC_API_GUARD("xc_comm_split", {
    // A NULL out is checked inside, after the exchange, so every rank fails together.
    Status st = xc::check_usable(parent);
    if (st.ok()) st = xc::comm_split(parent, color, key, cfg, out);
    return finish("xc_comm_split", st);
  })
}

XC_EXPORT xc_result_t xc_comm_split_groups(xc_comm_t parent, int ngroups, const int *group_sizes, const int *ranks,
                                           const xc_config_t *cfg, xc_comm_t *out) {
  XC_API_GUARD("xc_comm_split_groups", {
    Status st = xc::check_usable(parent);
    if (st.ok()) st = xc::comm_split_groups(parent, ngroups, group_sizes, ranks, cfg, out);
    return finish("xc_comm_split_groups", st);
  })
}

XC_EXPORT xc_result_t xc_comm_create_group(xc_comm_t parent, int n, const int *ranks, int tag,
                                           const xc_config_t *cfg, xc_comm_t *out) {
  XC_API_GUARD("xc_comm_create_group", {
    // A NULL out is checked inside, during the exchange, so every member fails together.
    Status st = xc::check_usable(parent);
    if (st.ok()) st = xc::comm_create_group(parent, n, ranks, tag, cfg, out);
    return finish("xc_comm_create_group", st);
  })
}

XC_EXPORT xc_result_t xc_comm_dup(xc_comm_t comm, xc_comm_t *out) {
  XC_API_GUARD("xc_comm_dup", {
    Status st = xc::check_usable(comm);
    if (st.ok()) st = xc::comm_dup(comm, out);
    return finish("xc_comm_dup", st);
  })
}

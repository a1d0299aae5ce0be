#include "coll/shm/tables.h"

namespace xc::coll {

void shm_publish_table(ShmState &st, uint64_t s, const size_t *displs, const size_t *counts) {
  if (!shm_shares_tables(st)) return;
  uint64_t *table = reinterpret_cast<uint64_t *>(st.small_slot(st.rank, s));
  for (size_t j = 0; j < static_cast<size_t>(st.nranks); ++j) {
    table[2 * j] = displs[j];
    table[2 * j + 1] = counts[j];
  }
}

Status shm_peer_entry(CollContext &c, ShmState &st, int r, uint64_t s, uint64_t displs, uint64_t counts,
                      size_t *displ, size_t *count) {
  if (shm_shares_tables(st)) {
    const uint64_t *entry = reinterpret_cast<const uint64_t *>(st.small_slot(r, s)) + 2 * static_cast<size_t>(st.rank);
    *displ = entry[0];
    *count = entry[1];
    return Status::Ok();
  }
  size_t at = static_cast<size_t>(st.rank) * sizeof(size_t);
  XC_TRY(st.cma_read(c, r, displs + at, displ, sizeof *displ));
  return st.cma_read(c, r, counts + at, count, sizeof *count);
}

Status shm_peer_block(CollContext &c, ShmState &st, int r, uint64_t s, uint64_t displs, uint64_t counts, size_t esize,
                      size_t want, const char *op, size_t *displ) {
  size_t count = 0;
  XC_TRY(shm_peer_entry(c, st, r, s, displs, counts, displ, &count));
  return count == want / esize ? Status::Ok() : shm_block_mismatch(c, st, op, r, want, count * esize);
}

Status shm_block_mismatch(CollContext &c, const ShmState &st, const char *op, int r, size_t want, size_t got) {
  return Error(XC_ERR_INVALID_USAGE, "%s: rank %d expects %zu bytes from rank %d, which sends %zu (op #%d)", op,
               st.rank, want, r, got, c.seq());
}

Status shm_send_mismatch(CollContext &c, const ShmState &st, const char *op, int r, size_t sends, size_t want) {
  return Error(XC_ERR_INVALID_USAGE, "%s: rank %d sends %zu bytes to rank %d, which expects %zu (op #%d)", op,
               st.rank, sends, r, want, c.seq());
}

}  // namespace xc::coll

// xc-bench collectives: what one collective is to the sweep in coll.cc — its
// buffer sizes, bus-bandwidth factor, where its input lives in place, where
// each result element comes from (for the check), and the call. The table of
// them is coll_table.cc.
#pragma once

#include <cstddef>
#include <vector>

#include "coll_data.h"
#include "xcomm.h"

namespace xcb {

// One call's arguments, as every entry of the table sees them.
struct CollArgs {
  xc_comm_t comm = nullptr;
  const DtypeInfo *dtype = nullptr;
  int op = kCopy;  // an xc_op_t, or kCopy for collectives without a reduction
  int root = -1;   // -1 for collectives without a root
  int rank = 0, nranks = 1;
  size_t send_count = 0, recv_count = 0;  // elements of this rank's buffers
  bool in_place = false;                  // this rank calls the in-place form
  // The v-ops' arrays, equal blocks of `block` elements at i * block (set per
  // row for kVector collectives, so no call allocates).
  size_t block = 0;
  std::vector<size_t> counts, displs;
};

// Result element i of a rank is the reduction over ranks [lo, hi) of input
// element j (a copy of rank lo's element when hi == lo + 1).
struct Source {
  int lo, hi;
  size_t j;
};

enum CollFlags : unsigned {
  kData = 1u << 0,        // has buffers (barrier has none)
  kRedop = 1u << 1,       // takes -o
  kRoot = 1u << 2,        // takes -r
  kOutOfPlace = 1u << 3,  // the API has an out-of-place form
  kInPlace = 1u << 4,     // ... and an in-place one (XC_IN_PLACE, or one buffer)
  kInPlaceAtRoot = 1u << 5,  // only the root calls the in-place form; the others out of place
  kInPlaceInSend = 1u << 6,  // in place the input stays in sendbuf (scatter: recvbuf is XC_IN_PLACE)
  kVector = 1u << 7,         // a v-op: CollArgs::counts/displs are filled per row
};

struct CollSpec {
  const char *name;     // the subcommand
  const char *summary;  // one line for the usage
  unsigned flags;
  // This rank's send and receive counts for the nominal count of a row
  // (bytes / dtype size). The row's size is max(send, recv) elements.
  void (*counts)(size_t count, int nranks, size_t *send_count, size_t *recv_count);
  // busbw = algbw * bus_factor (nccl-tests' formulas; unused without kData).
  double (*bus_factor)(int nranks);
  // Optional (nullptr = the default in the comment):
  bool (*has_input)(const CollArgs &);          // this rank contributes input (every rank)
  size_t (*in_place_offset)(const CollArgs &);  // in place, input at recv + this (0)
  size_t (*checked)(const CollArgs &);          // result elements on this rank (recv_count)
  Source (*source)(const CollArgs &, size_t i);
  // send is XC_IN_PLACE when a.in_place (except kInPlaceInSend: the call
  // passes XC_IN_PLACE itself); collectives with one buffer use recv.
  xc_result_t (*call)(const CollArgs &, const void *send, void *recv);
};

extern const CollSpec kColls[];
extern const size_t kNumColls;

}  // namespace xcb

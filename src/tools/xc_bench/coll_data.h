// xc-bench collectives: the data types, the reduction ops, and the input
// pattern every rank can recompute for any rank, so each result is checked
// element by element against a value computed locally.
//
// Values are small integers, chosen per op so that every result is exact in
// every dtype (float16 and bfloat16 included) whatever the order of the
// reduction:
//   copy (broadcast, allgather, ...)  0 .. 127
//   sum, avg   0 .. m-1 with m = clamp(100/nranks + 1, 2, 16): sums <= 100
//   prod       1 or 2, and 2 only on ranks 0..5: products <= 64
//   min, max   0 .. 99, minus 50 for signed types (signed order is tested)
//   band, bor, bxor  64-bit hashes cut to the dtype (integers only), with
//              bit 1 set in every result (so no result equals kPoison)
// avg is the sum divided by the number of ranks: truncated for integers,
// correctly rounded for floats (the sum is exact, so sum/n rounded once in the
// dtype is the only right answer).
#pragma once

#include <cstddef>
#include <cstdint>

#include "xcomm.h"

namespace xcb {

struct DtypeInfo {
  const char *name;  // as -d takes it and the "type" column shows it
  xc_dtype_t dtype;
  size_t size;
  bool is_int;
  bool is_signed;
};

struct RedopInfo {
  const char *name;  // as -o takes it and the "redop" column shows it
  xc_op_t op;
  bool int_only;     // bitwise ops
};

extern const DtypeInfo kDtypes[];
extern const size_t kNumDtypes;
extern const RedopInfo kRedops[];
extern const size_t kNumRedops;

// The "op" of a collective that only moves data.
constexpr int kCopy = -1;

// What `rank` holds at element i of its input. variant (0 or 1) picks one of
// the two inputs the timed loop alternates between; op is an xc_op_t or kCopy.
int64_t input_value(int op, bool is_signed, int nranks, int rank, size_t i, int variant);

// buf[i] = v in the dtype: integers wrap to the width, floats are rounded to
// nearest even (exact for the values above).
void store_value(const DtypeInfo &d, void *buf, size_t i, int64_t v);

// buf[0..count) = this rank's input (element index base + k at k).
void fill_input(const DtypeInfo &d, int op, int nranks, int rank, int variant, void *buf, size_t count,
                size_t base = 0);

// The one correct result element: the reduction by op over ranks [lo, hi) of
// their input element j (op kCopy, or hi = lo + 1: rank lo's element), written
// to out (d.size bytes). AVG divides by hi - lo.
void expected_value(const DtypeInfo &d, int op, int nranks, int lo, int hi, size_t j, int variant, void *out);

// A byte pattern no correct result has (0xA5 in every byte), to fill output
// buffers before the checked call.
constexpr unsigned char kPoison = 0xA5;

}  // namespace xcb

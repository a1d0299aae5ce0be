#include <vector>

#include "algo/algorithms.h"

namespace xc::algo {

char *scratch(Scratch slot, size_t bytes) {
  // Per thread, so concurrent collectives on different threads never share;
  // grown, never shrunk, so steady traffic allocates nothing.
  thread_local std::vector<char> slots[static_cast<int>(Scratch::kCount)];
  std::vector<char> &v = slots[static_cast<int>(slot)];
  if (v.size() < bytes) {
    v.clear();
    v.shrink_to_fit();
    v.resize(bytes);
  }
  return v.data();
}

}  // namespace xc::algo

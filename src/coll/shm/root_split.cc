#include "coll/shm/root_split.h"

namespace xc::coll {

ShmRootSplit shm_root_split_policy(int n, long cores) {
  if (cores <= 0 || n <= cores) return ShmRootSplit::kOwnCores;
  long all = (n + cores - 1) / cores, peers = (n - 1 + cores - 1) / cores;  // busy ranks on the fullest core
  return all * (n - 1) <= n * peers ? ShmRootSplit::kAlways : ShmRootSplit::kShortOps;
}

}  // namespace xc::coll

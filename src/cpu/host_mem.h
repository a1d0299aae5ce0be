// Host memory for communication (xc_mem_alloc): 2 MiB aligned and marked
// for transparent huge pages, so the kernel's cross-process copies (CMA)
// pin and walk one page per 2 MiB. Every live allocation is recorded, so a
// pointer that did not come from here is refused instead of unmapped.
#pragma once

#include <cstddef>

#include "base/status.h"

namespace xc {

constexpr size_t kHostMemAlign = size_t{2} << 20;

// *ptr = bytes of zeroed memory (bytes > 0), mapped on first touch.
Status host_mem_alloc(size_t bytes, void **ptr);
// Unmap what host_mem_alloc returned; anything else is an error and stays.
Status host_mem_free(void *ptr);
// Whether p points into live memory from host_mem_alloc that the kernel may
// back with huge pages (its advice taken, THP not off). The collectives ask
// it to choose between single copy and their pipelines (coll/shm/steps.h).
bool host_mem_on_huge_pages(const void *p);

}  // namespace xc

// Internal to src/cpu: how each instruction-set level fills a kernel set.
#pragma once

#include "cpu/reduce.h"

namespace xc::cpu::detail {

// Every entry, with the portable kernels.
void fill_scalar(Kernels &k);
// Overwrite the entries the level vectorises. False (nothing written) when the
// level is not compiled in (not x86-64, or a compiler without target attributes).
bool fill_avx2(Kernels &k);
bool fill_avx512(Kernels &k);

}  // namespace xc::cpu::detail

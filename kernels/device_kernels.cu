// The GPU entry points of the kernels in this folder, one extern "C" name per
// dtype × op so the CUDA device finds each by name in the embedded fatbin
// (the device layer builds the same names from the same table).
// AVG has no kernel of its own: it is SUM with a divisor.
#include "kernels/custom.cuh"
#include "kernels/gate.cuh"
#include "kernels/reduce.cuh"

#define XC_KERNEL_REDUCE_OP(D, O)                                                      \
  extern "C" __global__ void xc_reduce_##D##_##O(xc::kernels::ReduceArgs a) {          \
    xc::kernels::reduce_body<D, O>(xc::kernels::Exec(), a);                             \
  }
#define XC_KERNEL_EACH_DTYPE(D, T, K, name)                              \
  XC_KERNEL_REDUCE_OP(D, XC_SUM) XC_KERNEL_REDUCE_OP(D, XC_PROD)         \
  XC_KERNEL_REDUCE_OP(D, XC_MIN) XC_KERNEL_REDUCE_OP(D, XC_MAX)          \
  XC_KERNEL_REDUCE_OP(D, XC_BAND) XC_KERNEL_REDUCE_OP(D, XC_BOR)         \
  XC_KERNEL_REDUCE_OP(D, XC_BXOR)
XC_REDUCE_DTYPES(XC_KERNEL_EACH_DTYPE)

extern "C" __global__ void xc_gate(xc::kernels::GateArgs g) { xc::kernels::gate_body(xc::kernels::Exec(), g); }

// The intra-node kernels (kernels/custom.cuh): the 16- and 32-bit floats ×
// sum, min, max (AVG is SUM with a divisor), and the bytewise gather.
#define XC_KERNEL_CUSTOM(D, O)                                                      \
  extern "C" __global__ void xc_custom_##D##_##O(xc::kernels::CustomArgs a) {      \
    xc::kernels::custom_reduce_body<D, O>(xc::kernels::Exec(), a);                  \
  }
#define XC_KERNEL_CUSTOM_DTYPE(D) XC_KERNEL_CUSTOM(D, XC_SUM) XC_KERNEL_CUSTOM(D, XC_MIN) XC_KERNEL_CUSTOM(D, XC_MAX)
XC_KERNEL_CUSTOM_DTYPE(XC_FLOAT32)
XC_KERNEL_CUSTOM_DTYPE(XC_FLOAT16)
XC_KERNEL_CUSTOM_DTYPE(XC_BFLOAT16)

extern "C" __global__ void xc_custom_gather(xc::kernels::CustomArgs a) {
  xc::kernels::custom_gather_body(xc::kernels::Exec(), a);
}

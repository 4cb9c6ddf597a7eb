// One BLAS call per matrix of a batched product, straight on the operands' strides (kernels.h).
#include <algorithm>
#include <limits>

#include "cpu/kernels.h"

// The Fortran BLAS that LibTorch's own CPU GEMMs call (OpenBLAS under Debian's LibTorch). Weak:
// a LibTorch that keeps its BLAS to itself (the 2.x wheels link MKL privately) leaves it null,
// and batched_matmul_takes says no.
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const float* alpha, const float* a, const int* lda,
                       const float* b, const int* ldb, const float* beta, float* c, const int* ldc)
    __attribute__((weak));

namespace nmt::cpu {
namespace {

/// One operand's last two dimensions as BLAS sees them. Row-major [rows, cols] with unit column
/// stride is, column-major, its transpose with leading dimension stride(-2): 'N' for the
/// operands of the transposed product BLAS computes. Unit row stride (a transposed view) is 'T'.
struct BlasOperand {
  char trans = 'N';
  int64_t ld = 0;
};

/// The layout of x's last two dimensions, or ld 0 when neither stride is 1 (a copy is needed).
BlasOperand blas_operand(const at::Tensor& x) {
  const int64_t rows = x.size(-2), cols = x.size(-1);
  if (x.stride(-1) == 1 && x.stride(-2) >= std::max<int64_t>(1, cols)) return {'N', x.stride(-2)};
  if (x.stride(-2) == 1 && x.stride(-1) >= std::max<int64_t>(1, rows)) return {'T', x.stride(-1)};
  return {};
}

bool fits_int(int64_t value) { return value >= 0 && value <= std::numeric_limits<int>::max(); }

}  // namespace

bool batched_matmul_takes(const at::Tensor& a, const at::Tensor& b) {
  if (sgemm_ == nullptr || !a.defined() || !b.defined()) return false;
  if (a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat) return false;
  if (!a.device().is_cpu() || !b.device().is_cpu() || a.dim() < 3 || a.dim() != b.dim()) {
    return false;
  }
  if (a.sizes().slice(0, a.dim() - 2) != b.sizes().slice(0, b.dim() - 2)) return false;
  if (a.size(-1) != b.size(-2) || a.numel() == 0 || b.numel() == 0) return false;
  for (const auto& x : {a, b}) {
    if (blas_operand(x).ld == 0 || !fits_int(blas_operand(x).ld)) return false;
  }
  return fits_int(a.size(-2)) && fits_int(a.size(-1)) && fits_int(b.size(-1));
}

at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(batched_matmul_takes(a, b), "batched_matmul: operands it does not take: ", a.sizes(),
              " and ", b.sizes());
  const int64_t batch_dims = a.dim() - 2;
  std::vector<int64_t> sizes = a.sizes().vec();
  sizes.back() = b.size(-1);
  at::Tensor c = at::empty(sizes, a.options());
  const int m = int(a.size(-2)), k = int(a.size(-1)), n = int(b.size(-1));
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: B's operand first.
  const BlasOperand op_a = blas_operand(a), op_b = blas_operand(b);
  const int lda = int(op_a.ld), ldb = int(op_b.ld), ldc = n;
  const float one = 1.0f, zero = 0.0f;
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  int64_t count = 1;
  for (int64_t d = 0; d < batch_dims; ++d) count *= a.size(d);
  // One call after another, as LibTorch's bmm makes them (each may use BLAS's own threads).
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset_a = 0, offset_b = 0, rest = i;
    for (int64_t d = batch_dims - 1; d >= 0; --d) {
      const int64_t index = rest % a.size(d);
      rest /= a.size(d);
      offset_a += index * a.stride(d);
      offset_b += index * b.stride(d);
    }
    sgemm_(&op_b.trans, &op_a.trans, &n, &m, &k, &one, pb + offset_b, &ldb, pa + offset_a, &lda,
           &zero, pc + i * int64_t(m) * n, &ldc);
  }
  return c;
}

}  // namespace nmt::cpu

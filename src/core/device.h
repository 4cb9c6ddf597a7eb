#pragma once

#include <string>

#include <ATen/ATen.h>

namespace nmt {

/// "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N". Asking for CUDA on a
/// machine without it is an nmt::Error naming the value.
at::Device resolve_device(const std::string& name);

/// Sets LibTorch's intra-op threads and OpenBLAS's threads (it ignores LibTorch's setting) to
/// `threads`; 0 means one per core. Returns the count used.
int64_t configure_threads(int64_t threads);

/// Sets the intra-op threads of the calling thread (ATen keeps the count per OpenMP thread;
/// LibTorch 2.x also makes it the default of threads started later): for worker threads that
/// run ops of their own (data-parallel training, serve's decoding workers). Call it on that
/// thread before its first op.
void set_thread_intra_op_threads(int64_t threads);

/// OpenBLAS's own thread count (0 when OpenBLAS is not the BLAS in this process), and setting
/// it (a no-op then).
int64_t blas_threads();
void set_blas_threads(int64_t threads);

/// The state of an accelerator's default generator (on CUDA what at::dropout draws from), so
/// that a checkpoint can restore it; an undefined tensor on the CPU, whose generator the
/// trainer saves anyway. Setting an undefined state is a no-op.
at::Tensor accelerator_generator_state(const at::Device& device);
void set_accelerator_generator_state(const at::Device& device, const at::Tensor& state);

/// The state of the CPU's default generator (dropout on the CPU, and the initial weights of every
/// model built), and its restoration.
at::Tensor cpu_generator_state();
void set_cpu_generator_state(const at::Tensor& state);

/// Reseeds an accelerator's default generator (a no-op on the CPU): the trainer gives each
/// batch slot of a step a seed of its own, so ranks draw different dropout masks.
void seed_accelerator_generator(const at::Device& device, uint64_t seed);

/// One line describing the device and threads (and OMP_WAIT_POLICY when set), for logs.
std::string describe_device(const at::Device& device);

}  // namespace nmt

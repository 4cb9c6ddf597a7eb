#pragma once

namespace nmt::cli {

/// Process-level performance settings that must be in place before LibTorch, OpenMP and
/// OpenBLAS initialise (measured in ../shared/docs/ENVIRONMENT.md):
/// - OMP_WAIT_POLICY=PASSIVE: OpenMP's spinning threads otherwise fight OpenBLAS's threads and
///   make 2 threads slower than 1. libgomp reads it when loaded, so if it is unset the process
///   re-executes itself once with it set (the user's own value always wins).
/// - glibc malloc thresholds raised so large activation buffers are reused instead of being
///   returned to the kernel after every step (page faults cost ~25% of CPU time).
///   NMT_MALLOC_THRESHOLD_MB sets the mmap threshold (trim threshold: 4×); 0 keeps glibc's.
void tune_runtime(char** argv);

}  // namespace nmt::cli

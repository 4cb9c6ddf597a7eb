#pragma once

#include "core/config.h"

namespace nmt::cli {

/// Process-level performance settings that must be in place before LibTorch, OpenMP and
/// OpenBLAS initialise (measured in ../shared/docs/ENVIRONMENT.md):
/// - OMP_WAIT_POLICY=PASSIVE for `train` and `bench`: OpenMP's spinning threads otherwise fight
///   OpenBLAS's threads and make 2 threads slower than 1 in fp32 training. libgomp reads it when
///   loaded, so if it is unset the process re-executes itself once with it set (the user's own
///   value always wins; training in bf16 switches to ACTIVE, see tune_for_training). Not for a
///   command line that asks for help or the version only, nor for the other commands: decoding
///   under libgomp's default was faster than under PASSIVE (test_2016, default model, 2 threads:
///   greedy 2.36 against 2.66–2.72 s, beam 5 5.06–5.19 against 5.65–5.79 s; with one worker of
///   two threads 3.84–4.16 against 4.78–5.02 s), and without the second start an empty
///   `nmt translate` takes 0.54 s instead of 0.91 s.
/// - glibc malloc thresholds raised so large activation buffers are reused instead of being
///   returned to the kernel after every step (page faults cost ~25% of CPU time).
///   NMT_MALLOC_THRESHOLD_MB sets the mmap threshold (trim threshold: 4×; default 32, 0 keeps
///   glibc's). Measured with `nmt bench train` (45 steps of the default config): 0 → 2,021
///   tok/s, 2.26 GB peak; 32 → 2,113 tok/s, 2.28 GB; 256 → 2,407 tok/s but 4.6 GB, and a 42-min
///   run at 256 grew to 12.5 GB (fragmentation from varying batch shapes), hence 32.
void tune_runtime(char** argv);

/// Training (and `bench train`) in bf16 on CPU: every matmul runs in oneDNN on all OpenMP
/// threads, and OpenMP workers that spin between parallel regions (OMP_WAIT_POLICY=ACTIVE)
/// instead of sleeping made `nmt bench train` of the default config 3,444 / 3,589 / 3,690
/// target tokens/s against 2,820 / 2,672 / 2,395 with PASSIVE (alternating runs); in fp32,
/// where OpenBLAS does the matmuls, ACTIVE was slower (1,060 vs 1,650). When PASSIVE was
/// chosen by tune_runtime (not by the user), this re-executes the process once with ACTIVE;
/// call it before anything is written. Other configs: no-op.
void tune_for_training(const Config& config);

}  // namespace nmt::cli

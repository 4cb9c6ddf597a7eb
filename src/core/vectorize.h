#pragma once

// NMT_VECTOR_CLONES before a function with a plain loop over arrays: GCC builds AVX-512 and AVX2
// variants beside the baseline and picks one at load time (the build targets plain x86-64, so
// without this the loop gets SSE2 only). Other compilers get the plain, still vectorisable loop.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NMT_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NMT_VECTOR_CLONES
#endif

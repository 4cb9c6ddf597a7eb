// The environment every test's nmt children start in.
//
// `nmt train` and `nmt bench` re-execute themselves once at start-up to choose OpenMP's wait
// policy (cli/runtime.cpp: libgomp reads OMP_WAIT_POLICY only when it loads), which doubles the
// start-up of each process: 0.7 s to 1.4 s here, 2 s to 4 s under ASan. The tests' children get
// PASSIVE, the policy nmt chooses for those commands but bf16 training on CPU, so they start
// once. A policy already in the environment wins;
// CmdTrain.Bf16TrainingOnCpuRunsWithSpinningOpenMpThreads and
// CmdTranslate.DecodingStartsOnceWhereTrainingChoosesItsWaitPolicy clear it to test the
// re-execution.
#include <cstdlib>

namespace {

const bool kPassiveChildren = setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0) == 0;

}  // namespace

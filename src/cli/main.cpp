// nmt: the command line. Each subcommand lives in its own cmd_*.cpp and only turns arguments into
// config structs for the library; errors surface here as one line and a non-zero exit.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <torch/version.h>

#include "cli/commands.h"
#include "cli/runtime.h"
#include "core/error.h"
#include "nmt/version.h"

#ifdef NMT_JEMALLOC
// jemalloc is this binary's allocator (CMakeLists.txt says why). Freed pages stay with the
// process for reuse, as glibc keeps them: with jemalloc's default decay they went back to the
// kernel and were faulted in again every training step (a fifth fewer tokens/s). The
// environment's MALLOC_CONF still overrides this.
extern "C" const char* malloc_conf;
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
#endif

namespace {

void print_help() {
  std::cout << "nmt " << nmt::kVersion
            << " - train, evaluate and run Transformer translation models (LibTorch)\n\n"
               "usage: nmt <command> [options]    (nmt <command> --help for its options)\n\n"
               "commands:\n";
  for (const auto& command : nmt::cli::commands()) {
    std::printf("  %-10s %s\n", command.name, command.summary);
  }
  std::cout << "\noptions:\n  -h, --help     this help\n  -V, --version  version and build\n";
}

void print_version() {
  std::cout << "nmt " << nmt::kVersion << "\nLibTorch " << TORCH_VERSION << "\nsentencepiece "
            << nmt::kSentencepieceOrigin << "\n"
#ifdef NMT_JEMALLOC
            << "allocator jemalloc\n";
#else
            << "allocator glibc malloc\n";
#endif
}

int dispatch(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    print_help();
    return argc < 2 ? 1 : 0;
  }
  if (!std::strcmp(argv[1], "-V") || !std::strcmp(argv[1], "--version")) {
    print_version();
    return 0;
  }
  for (const auto& command : nmt::cli::commands()) {
    if (argv[1] == std::string(command.name)) {
      std::string name = std::string("nmt ") + command.name;
      argv[1] = name.data();
      return command.run(argc - 1, argv + 1);
    }
  }
  throw nmt::Error("unknown command '" + std::string(argv[1]) + "' (run nmt --help for the list)");
}

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) then makes write() fail with EFBIG, which the writers report
  // as an error naming the file, instead of killing the process mid-write with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  nmt::cli::tune_runtime(argv);
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}

// nmt bench <benchmark>: speed measurements. Each benchmark is one entry of kBenchmarks; `decode`
// compares the tutorial's decoding loop with batched cached greedy and beam search.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/decode_options.h"
#include "cli/runtime.h"
#include "core/device.h"
#include "core/error.h"
#include "cpu/packed_linear.h"
#include "data/corpus.h"
#include "decode/benchmark.h"
#include "train/bench.h"

namespace nmt::cli {
namespace {

/// One `nmt bench <name>` benchmark; `run` gets argv with argv[0] = "nmt bench <name>".
struct Benchmark {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

/// A rate with three significant figures and no exponent: 1234, 56.7, 8.90, 0.0123. A tiny layer
/// on a slow host must not print as 0.0.
std::string three_figures(double value) {
  const int decimals =
      value > 0.0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(value))), 0, 9) : 1;
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

/// Source ids of the first `limit` lines, cut to the model's position table.
std::vector<std::vector<int64_t>> bench_sources(const DecodeSession& session,
                                                const std::vector<std::string>& lines,
                                                int64_t limit) {
  const auto max_src = static_cast<size_t>(session.loaded.config.model.max_len - 1);
  std::vector<std::vector<int64_t>> sources;
  for (const auto& line : lines) {
    if (static_cast<int64_t>(sources.size()) >= limit) break;
    auto ids = session.loaded.tokenizer.encode_src(line);
    if (ids.size() > max_src) ids.resize(max_src);
    sources.push_back(std::move(ids));
  }
  if (sources.empty()) throw Error("bench decode: no sentences to decode");
  return sources;
}

int run_bench_decode(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Decoding speed of the tutorial loop (one sentence at a time, decoder "
      "recomputed over the whole prefix) against batched greedy search with "
      "the decoder cache and batched beam search.\n\n"
      "  nmt bench decode --checkpoint checkpoints/multi30k_en_de --limit 200\n");
  add_decode_options(options);
  // clang-format off
  options.add_options("benchmark")
      ("split", "split of the checkpoint's data.dir to decode (source side)",
       cxxopts::value<std::string>()->default_value("test_2016_flickr"), "NAME")
      ("src", "decode this file instead of --split", cxxopts::value<std::string>(), "FILE")
      ("limit", "decode the first N sentences", cxxopts::value<int64_t>()->default_value("300"),
       "N")
      ("bench-beam", "beam size of the beam-search run",
       cxxopts::value<int64_t>()->default_value("5"), "N");
  // clang-format on
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  for (const char* option : {"mbr", "sample"}) {
    if (args.count(option)) {
      throw Error(std::string("bench decode times greedy and beam search; --") + option +
                  " is not one of them (measure it with nmt evaluate --" + option +
                  " N, which prints the decoding speed)");
    }
  }
  auto session = open_decode_session(args);
  if (session.models.size() > 1) {
    throw Error("nmt bench decode times one checkpoint; --checkpoint lists " +
                std::to_string(session.models.size()) +
                " (time an ensemble with nmt evaluate, which reports sentences/s)");
  }
  if (session.models.shortlist()) {
    throw Error(
        "nmt bench decode checks its searches against the naive loop over the whole "
        "vocabulary; time --shortlist with nmt evaluate or scripts/bench/bench_deploy.sh "
        "(SHORTLIST=FILE)");
  }
  const auto& data = session.loaded.config.data;
  const auto file = args.count("src")
                        ? std::filesystem::path(args["src"].as<std::string>())
                        : split_file(data.dir, args["split"].as<std::string>(), data.src_lang);
  const auto sources = bench_sources(session, read_lines(file), args["limit"].as<int64_t>());
  std::printf("%s: %zu sentences from %s, %s\n", session.checkpoint.string().c_str(),
              sources.size(), file.string().c_str(), describe_device(session.device).c_str());
  const auto timings =
      benchmark_decoding(session.loaded.model, sources, session.translator->config(),
                         args["bench-beam"].as<int64_t>(), session.device);
  std::printf("%-46s %10s %12s %9s %9s\n", "method", "sent/s", "tokens/s", "seconds", "speedup");
  for (const auto& t : timings) {
    std::printf("%-46s %10.1f %12.0f %9.2f %8.1fx\n", t.method.c_str(), t.sentences_per_second(),
                t.tokens_per_second(), t.seconds,
                t.seconds > 0 ? timings.front().seconds / t.seconds : 0.0);
  }
  std::printf("naive and cached greedy outputs differ on %lld of %zu sentences\n",
              static_cast<long long>(count_differences(timings[0], timings[1])), sources.size());
  return 0;
}

int run_bench_train(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Training throughput of a config on its data (target tokens/s, model "
                           "FLOP/s) against this machine's measured matmul ceilings.\n\n"
                           "  nmt bench train --config configs/multi30k_en_de.json --steps 30\n");
  add_config_options(options);
  options.add_options()("steps", "timed optimizer steps",
                        cxxopts::value<int64_t>()->default_value("30"), "N")(
      "warmup", "untimed steps first", cxxopts::value<int64_t>()->default_value("5"), "N");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  const int64_t steps = args["steps"].as<int64_t>(), warmup = args["warmup"].as<int64_t>();
  if (steps < 1 || warmup < 0) throw Error("bench train: --steps must be >= 1 and --warmup >= 0");
  const Config config = config_from_args(args);
  tune_for_training(config);
  bench_train(config, steps, warmup, std::cout);
  return 0;
}

/// The --threads option of the CPU benchmarks: `fallback` threads unless given.
void add_threads_option(cxxopts::Options& options, const char* fallback) {
  options.add_options()("threads", "CPU threads (0: one per core)",
                        cxxopts::value<int64_t>()->default_value(fallback), "N");
}

int run_bench_matmul(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "This machine's matmul ceiling: GFLOP/s of square fp32 and bf16 "
                           "matrix products at several sizes (nmt bench train compares the "
                           "model's FLOP/s with the best of each column).\n\n"
                           "  nmt bench matmul --threads 2\n  nmt bench matmul --device cuda\n");
  add_threads_option(options, "0");
  options.add_options()("device", "auto | cpu | cuda | cuda:N",
                        cxxopts::value<std::string>()->default_value("auto"))(
      "sizes", "square sizes to time, e.g. 64,256 (default: the ceiling's sizes for the device)",
      cxxopts::value<std::vector<int64_t>>(), "N,N,...");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  const at::Device device = resolve_device(args["device"].as<std::string>());
  configure_threads(args["threads"].as<int64_t>());
  std::vector<int64_t> sizes = ceiling_sizes(device);
  if (args.count("sizes")) sizes = args["sizes"].as<std::vector<int64_t>>();
  for (const int64_t n : sizes) {
    if (n < 1 || n > 16384) {
      throw Error("bench matmul: --sizes " + std::to_string(n) + " is not valid: use 1..16384");
    }
  }
  std::printf("%s\n%8s %12s %12s\n", describe_device(device).c_str(), "n", "fp32 GFLOP/s",
              "bf16 GFLOP/s");
  double best_fp32 = 0.0, best_bf16 = 0.0;
  for (const int64_t n : sizes) {
    const double fp32 = ceiling_gflops_at(n, "fp32", device);
    const double bf16 = ceiling_gflops_at(n, "bf16", device);
    best_fp32 = std::max(best_fp32, fp32);
    best_bf16 = std::max(best_bf16, bf16);
    std::printf("%8lld %12s %12s\n", static_cast<long long>(n), three_figures(fp32).c_str(),
                three_figures(bf16).c_str());
  }
  std::printf("%8s %12s %12s\n", "ceiling", three_figures(best_fp32).c_str(),
              three_figures(best_bf16).c_str());
  return 0;
}

/// "256x1024" -> {256, 1024}; an nmt::Error naming the value otherwise.
std::pair<int64_t, int64_t> parse_shape(const std::string& shape) {
  const auto x = shape.find('x');
  try {
    size_t used_in = 0, used_out = 0;
    const int64_t in = std::stoll(shape.substr(0, x), &used_in);
    const int64_t out = std::stoll(shape.substr(x + 1), &used_out);
    if (x != std::string::npos && used_in == x && used_out == shape.size() - x - 1 && in >= 1 &&
        in <= 65536 && out >= 1 && out <= 65536) {
      return {in, out};
    }
  } catch (const std::exception&) {
  }
  throw Error("bench linear: --shapes '" + shape +
              "' is not valid: use INxOUT, each 1..65536, e.g. 256x1024");
}

int run_bench_linear(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "float32 linear layers as CPU decoding meets them: GFLOP/s of LibTorch's x·Wᵀ + b "
      "(OpenBLAS, which packs W at every call) against nmt's kernel with W packed once "
      "(cpu/packed_linear.h, what float32 decoding on a CPU uses), for a few rows at a time.\n\n"
      "  nmt bench linear --threads 1\n"
      "  nmt bench linear --rows 5,50 --shapes 512x2048,2048x512\n");
  add_threads_option(options, "1");
  options.add_options()("rows", "rows per product (the sentences or hypotheses of a decoder step)",
                        cxxopts::value<std::vector<int64_t>>()->default_value("8,32,100,300"),
                        "N,N,...")(
      "shapes",
      "INxOUT of each layer (default: the default model's d_model 256, d_ff 1024, "
      "vocabulary 4000)",
      cxxopts::value<std::vector<std::string>>()->default_value(
          "256x256,256x1024,1024x256,256x4000"),
      "INxOUT,...");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  configure_threads(args["threads"].as<int64_t>());
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (const auto& shape : args["shapes"].as<std::vector<std::string>>()) {
    shapes.push_back(parse_shape(shape));
  }
  const auto rows = args["rows"].as<std::vector<int64_t>>();
  for (const int64_t n : rows) {
    if (n < 1 || n > 65536) {
      throw Error("bench linear: --rows " + std::to_string(n) + " is not valid: use 1..65536");
    }
  }
  std::printf("%s; packed kernel: %s\n%6s %6s %6s %16s %14s %8s %10s\n",
              describe_device(at::kCPU).c_str(), cpu::gemm_isa_name(cpu::gemm_isa()).c_str(),
              "rows", "in", "out", "LibTorch GFLOP/s", "packed GFLOP/s", "speed-up", "max |diff|");
  for (const int64_t n : rows) {
    for (const auto& [in, out] : shapes) {
      const LinearTiming t = benchmark_linear(n, in, out);
      std::printf("%6lld %6lld %6lld %16s %14s %7.2fx %10.2g\n", static_cast<long long>(n),
                  static_cast<long long>(in), static_cast<long long>(out),
                  three_figures(t.libtorch_gflops).c_str(), three_figures(t.packed_gflops).c_str(),
                  t.packed_gflops / t.libtorch_gflops, t.max_difference);
    }
  }
  return 0;
}

const std::vector<Benchmark> kBenchmarks = {
    {"matmul", "this machine's fp32/bf16 matmul ceiling (GFLOP/s)", run_bench_matmul},
    {"decode", "naive vs batched cached greedy vs beam search", run_bench_decode},
    {"linear", "float32 linear layers: LibTorch against the packed kernel (GFLOP/s)",
     run_bench_linear},
    {"train", "training throughput (tokens/s, FLOP/s vs the matmul ceiling)", run_bench_train},
};

/// "decode, train" (for one-line errors).
std::string benchmark_names() {
  std::string names;
  for (const auto& b : kBenchmarks) names += (names.empty() ? "" : ", ") + std::string(b.name);
  return names;
}

int run_bench(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    if (argc >= 2 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
      std::printf("usage: nmt bench <benchmark> [options]   (nmt bench <benchmark> --help)\n");
      for (const auto& b : kBenchmarks) std::printf("  %-8s %s\n", b.name, b.summary);
      return 0;
    }
    throw Error("nmt bench: name a benchmark first: " + benchmark_names() +
                " (nmt bench <benchmark> --help)");
  }
  for (const auto& benchmark : kBenchmarks) {
    if (argv[1] == std::string(benchmark.name)) {
      std::string name = std::string(argv[0]) + " " + benchmark.name;
      argv[1] = name.data();
      return benchmark.run(argc - 1, argv + 1);
    }
  }
  throw Error("nmt bench: unknown benchmark '" + std::string(argv[1]) +
              "' (available: " + benchmark_names() + ")");
}

const bool registered_bench =
    register_command({"bench", "speed benchmarks (nmt bench decode|train ...)", run_bench, 70});

}  // namespace
}  // namespace nmt::cli

// nmt inspect: load a checkpoint (proving it loads) and print its training state; optionally
// dump its weights' raw bytes so two checkpoints can be compared bit for bit (cmp).
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/error.h"
#include "core/languages.h"
#include "train/checkpoint.h"

namespace nmt::cli {
namespace {

/// Writes every parameter and buffer, in name order, as "name dtype shape\n" then its bytes.
void dump_weights(Seq2Seq& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write --weights-out " + path);
  for (const auto& named : {model->named_parameters(), model->named_buffers()}) {
    for (const auto& item : named) {
      const auto tensor = item.value().contiguous().to(at::kCPU);
      out << item.key() << ' ' << tensor.dtype() << ' ' << tensor.sizes() << '\n';
      out.write(static_cast<const char*>(tensor.data_ptr()),
                static_cast<std::streamsize>(tensor.nbytes()));
    }
  }
  if (!out.flush()) throw Error("cannot write --weights-out " + path);
}

int run_inspect(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Load a checkpoint (file or run directory) and print its training state as JSON: step, "
      "epoch, best metric and step, parameter count, the language pairs it translates and where "
      "its language tags go (data.lang_tag).\n\n"
      "  nmt inspect checkpoints/multi30k_en_de/last.pt\n"
      "  nmt inspect a.pt --weights-out a.bin && nmt inspect b.pt --weights-out b.bin && "
      "cmp a.bin b.bin\n");
  // clang-format off
  options.add_options()
      ("weights-out", "also write the weights' raw bytes (name order) to FILE, for cmp",
       cxxopts::value<std::string>(), "FILE")
      ("checkpoint", "the checkpoint", cxxopts::value<std::string>());
  // clang-format on
  options.parse_positional({"checkpoint"});
  options.positional_help("CKPT");
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  if (!args.count("checkpoint")) throw Error("give the checkpoint to inspect (file or run dir)");
  const std::filesystem::path path = resolve_checkpoint(args["checkpoint"].as<std::string>());
  LoadedModel loaded = load_checkpoint(path, at::kCPU);
  int64_t parameters = 0;
  for (const auto& p : loaded.model->parameters()) parameters += p.numel();
  const TrainingState& s = loaded.state;
  nlohmann::json info = {
      {"checkpoint", path.string()},
      {"step", s.step},
      {"epoch", s.epoch},
      {"batch_in_epoch", s.batch_in_epoch},
      {"best_step", s.best_step},
      {"best_metric", std::isnan(s.best_metric) ? nlohmann::json() : nlohmann::json(s.best_metric)},
      {"parameters", parameters}};
  nlohmann::json pairs = nlohmann::json::array(), languages = nlohmann::json::array();
  for (const auto& pair : trained_pairs(loaded.config.data)) {
    pairs.push_back(pair.name());
    languages.push_back({{"src", pair.src}, {"tgt", pair.tgt}});
  }
  info["pairs"] = pairs;          // "en-de": for reading
  info["languages"] = languages;  // {"src": "pt-BR", "tgt": "en"}: for scripts (codes hold '-')
  info["lang_tag"] = choice_name(loaded.config.data.lang_tag);
  std::cout << info.dump() << "\n";
  if (args.count("weights-out")) dump_weights(loaded.model, args["weights-out"].as<std::string>());
  return 0;
}

const bool registered_inspect = register_command(
    {"inspect", "print a checkpoint's training state; dump its weights for comparison", run_inspect,
     65});

}  // namespace
}  // namespace nmt::cli

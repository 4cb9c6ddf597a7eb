// nmt export: argv -> load_checkpoint -> export_ctranslate2, then a list of what was written.
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/choice.h"
#include "core/error.h"
#include "decode/shortlist.h"
#include "export/ctranslate2.h"
#include "train/checkpoint.h"

namespace nmt::cli {
namespace {

/// The formats --format accepts (one so far).
constexpr const char* kExportFormats = "ctranslate2";

/// Prints the directory, the storage of the weights and each file with its size.
void print_export(const std::filesystem::path& checkpoint, int64_t step, const ExportResult& result,
                  Ct2Quantization quantization) {
  std::cout << "exported " << checkpoint.string() << " (step " << step << ") for CTranslate2 into "
            << result.directory.string() << ": " << choice_name(quantization) << " weights, "
            << result.variables << " variables, " << result.aliases << " aliases\n";
  for (const auto& file : result.files) {
    std::cout << "  " << std::left << std::setw(24) << file.name << std::right << std::setw(12)
              << file.bytes << " bytes\n";
  }
}

int run_export(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Export a checkpoint for another runtime. ctranslate2: a CTranslate2 4.x model directory "
      "(model.bin, config.json, vocabularies, SentencePiece model), as Argos Translate and "
      "LibreTranslate packages hold it; docs/deploy.md shows how to use and package it.\n\n"
      "  nmt export --checkpoint checkpoints/multi30k_en_de --format ctranslate2 \\\n"
      "      --output ct2_en_de --quantization int8\n");
  // clang-format off
  options.add_options()
      ("checkpoint", "the checkpoint (file or run directory)", cxxopts::value<std::string>(),
       "CKPT")
      ("format", "what to export to: ctranslate2",
       cxxopts::value<std::string>()->default_value("ctranslate2"), "NAME")
      ("output", "the directory to create (it must not exist yet)", cxxopts::value<std::string>(),
       "DIR")
      ("quantization", "how model.bin stores the weight matrices: float32, int16 or int8 (one "
       "scale per output row, about 4x smaller)",
       cxxopts::value<std::string>()->default_value("float32"), "TYPE")
      ("shortlist", "also write this lexical shortlist (nmt shortlist) as vmap.txt, "
       "CTranslate2's vocabulary map (translate with use_vmap)",
       cxxopts::value<std::string>(), "FILE");
  // clang-format on
  cxxopts::ParseResult args;
  if (!parse(options, argc, argv, args)) return 0;
  if (!args.count("checkpoint")) throw Error("--checkpoint CKPT is required");
  if (!args.count("output")) throw Error("--output DIR is required");
  const auto format = args["format"].as<std::string>();
  if (format != kExportFormats) {
    throw Error("--format '" + format + "' is not valid: choose one of " + kExportFormats);
  }
  ExportOptions export_options;
  export_options.quantization =
      require_choice<Ct2Quantization>("--quantization", args["quantization"].as<std::string>());
  const auto path = resolve_checkpoint(args["checkpoint"].as<std::string>());
  const LoadedModel loaded = load_checkpoint(path, at::kCPU);
  if (args.count("shortlist")) {
    std::ostringstream vmap;
    Shortlist::load(args["shortlist"].as<std::string>(), loaded.tokenizer)
        .write_vmap(vmap, loaded.tokenizer);
    export_options.vmap = vmap.str();
  }
  const auto result = export_ctranslate2(loaded, args["output"].as<std::string>(), export_options);
  print_export(path, loaded.state.step, result, export_options.quantization);
  return 0;
}

const bool registered_export = register_command(
    {"export", "export a checkpoint for CTranslate2 (Argos Translate, LibreTranslate)", run_export,
     67});

}  // namespace
}  // namespace nmt::cli

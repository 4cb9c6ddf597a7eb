#include "train/finetune.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path.string() + "'");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

fs::path parent_checkpoint(const fs::path& path, InitKeep keep) {
  if (keep == InitKeep::kOptimizer && fs::is_directory(path)) {
    if (!fs::exists(path / "last.pt")) {
      throw Error("--init-from " + path.string() +
                  " with train.init_keep = optimizer: the run directory has no last.pt (the "
                  "only checkpoint with optimizer state)");
    }
    return path / "last.pt";
  }
  return resolve_checkpoint(path);
}

Parent load_parent(const fs::path& path, InitKeep keep, const at::Device& device) {
  const fs::path checkpoint = parent_checkpoint(path, keep);
  const std::string bytes = read_bytes(checkpoint);
  return Parent{checkpoint, load_checkpoint(checkpoint, device), bytes.size(),
                crc32_hex(crc32_update(0, bytes.data(), bytes.size()))};
}

void adopt_parent_config(const Parent& parent, Config& config) {
  const std::string from = "--init-from " + parent.checkpoint.string();
  if (!config.data.spm_model.empty()) {
    throw Error(from + ": a fine-tuned run keeps its parent's tokenizer; drop data.spm_model = '" +
                config.data.spm_model + "'");
  }
  const Config& was = parent.loaded.config;
  config.data.vocab_size = was.data.vocab_size;
  config.data.vocab_type = was.data.vocab_type;
  config.data.joint_vocab = was.data.joint_vocab;
  config.data.character_coverage = was.data.character_coverage;
  config.data.normalization = was.data.normalization;
  config.model.src_vocab_size = was.model.src_vocab_size;
  config.model.tgt_vocab_size = was.model.tgt_vocab_size;
  // Dropout rates only regularise training; every other model key shapes the weights or what
  // they compute.
  Config same_dropout = config;
  same_dropout.model.dropout = was.model.dropout;
  same_dropout.model.attention_dropout = was.model.attention_dropout;
  same_dropout.model.word_dropout = was.model.word_dropout;
  const std::string difference = first_difference(was, same_dropout, "model");
  if (!difference.empty()) {
    throw Error(from + ": the parent's model does not match the config: " + difference +
                " (parent vs now); a fine-tuned model keeps its parent's model section (only "
                "model.dropout, attention_dropout and word_dropout may change)");
  }
}

void adopt_parent_tokenizer(const Parent& parent, const DataConfig& data, const fs::path& run_dir) {
  const Tokenizer& tokenizer = parent.loaded.tokenizer;
  const auto files = Tokenizer::model_files(data, run_dir);
  const auto originals =
      Tokenizer::model_files(parent.loaded.config.data, parent.checkpoint.parent_path());
  bool originals_match = originals.size() == files.size();
  for (const auto& file : originals) originals_match = originals_match && fs::exists(file);
  if (originals_match) {
    try {
      originals_match = Tokenizer::load(originals).serialized() == tokenizer.serialized();
    } catch (const Error&) {
      originals_match = false;  // damaged or foreign: the checkpoint's own copy is the truth
    }
  }
  fs::create_directories(run_dir);
  if (!originals_match) {
    tokenizer.save(files);
    return;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    write_file_atomically(files[i], read_bytes(originals[i]), "tokenizer model");
  }
}

std::string describe_parent(const Parent& parent, InitKeep keep) {
  return "fine-tuning from " + parent.checkpoint.string() + " (step " +
         std::to_string(parent.loaded.state.step) + ", " + std::to_string(parent.bytes) +
         " bytes, crc32 " + parent.crc32 + "); " +
         (keep == InitKeep::kOptimizer ? "its optimizer state kept" : "fresh optimizer") +
         ", step, schedule, epoch and best metric start anew";
}

void record_parent(const Parent& parent, InitKeep keep, const fs::path& run_dir) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(parent.checkpoint, ec);
  const nlohmann::json record = {{"checkpoint", (ec ? parent.checkpoint : absolute).string()},
                                 {"step", parent.loaded.state.step},
                                 {"bytes", parent.bytes},
                                 {"crc32", parent.crc32},
                                 {"init_keep", choice_name(keep)}};
  write_file_atomically(run_dir / "parent.json", record.dump(2) + "\n", "parent record");
}

}  // namespace nmt

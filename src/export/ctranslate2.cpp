// The CTranslate2 model directory: model.bin (export/ctranslate2_spec.h), config.json, the
// vocabularies and the SentencePiece models, written into a staging directory that is renamed
// into place at the end.
#include "export/ctranslate2.h"

#include <algorithm>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "core/special_ids.h"
#include "export/ctranslate2_spec.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

/// The pieces of each side's vocabulary, in id order (a CTranslate2 vocabulary is a JSON list
/// whose positions are the ids).
struct Ct2Vocabularies {
  std::vector<std::string> source;
  std::vector<std::string> target;
  bool shared() const { return source == target; }
};

/// Every piece of `tokenizer`'s target model, ids 0 .. size-1.
std::vector<std::string> target_pieces(const Tokenizer& tokenizer) {
  std::vector<int64_t> ids(static_cast<size_t>(tokenizer.tgt_vocab_size()));
  for (size_t id = 0; id < ids.size(); ++id) ids[id] = static_cast<int64_t>(id);
  return tokenizer.tgt_pieces(ids);
}

/// The two vocabularies, checked against the model's embedding sizes and for the special pieces
/// CTranslate2 names once for both sides in config.json.
Ct2Vocabularies ct2_vocabularies(const LoadedModel& loaded) {
  const Tokenizer& tokenizer = loaded.tokenizer;
  Ct2Vocabularies vocab;
  vocab.target = target_pieces(tokenizer);
  // Tokenizer lists pieces by id for its target model only: a tokenizer made of the source
  // model alone (joint, so that model is its "target" too) lists the source side.
  vocab.source = tokenizer.joint()
                     ? vocab.target
                     : target_pieces(Tokenizer::from_serialized({tokenizer.serialized().front()}));
  const ModelConfig& config = loaded.model->config();
  if (int64_t(vocab.source.size()) != config.src_vocab_size ||
      int64_t(vocab.target.size()) != config.tgt_vocab_size) {
    throw Error("export: the tokenizer's vocabularies (" + std::to_string(vocab.source.size()) +
                ", " + std::to_string(vocab.target.size()) + " pieces) do not match the model's (" +
                std::to_string(config.src_vocab_size) + ", " +
                std::to_string(config.tgt_vocab_size) + ")");
  }
  for (const int64_t id : {kUnkId, kBosId, kEosId}) {
    if (vocab.source[size_t(id)] != vocab.target[size_t(id)]) {
      throw Error("export: piece " + std::to_string(id) + " is '" + vocab.source[size_t(id)] +
                  "' in the source vocabulary but '" + vocab.target[size_t(id)] +
                  "' in the target one; CTranslate2's config.json names unk, bos and eos once "
                  "for both");
    }
  }
  return vocab;
}

/// config.json (TransformerConfig, model_spec.py's SequenceToSequenceModelConfig). nmt feeds the
/// encoder the source pieces and eos, no bos; the decoder starts from bos (decode/translator.cpp).
nlohmann::json ct2_config(const Ct2Vocabularies& vocab, double layer_norm_epsilon) {
  return {{"add_source_bos", false},
          {"add_source_eos", true},
          {"bos_token", vocab.target[size_t(kBosId)]},
          {"decoder_start_token", vocab.target[size_t(kBosId)]},
          {"eos_token", vocab.target[size_t(kEosId)]},
          {"layer_norm_epsilon", layer_norm_epsilon},
          {"multi_query_attention", false},
          {"unk_token", vocab.target[size_t(kUnkId)]}};
}

/// Writes `json` (2-space indented, non-ASCII escaped as Python's json.dump does) to `path`.
void write_json(const fs::path& path, const nlohmann::json& json, const std::string& what) {
  std::string text;
  try {
    text = json.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
  } catch (const nlohmann::json::exception& e) {  // a piece that is not valid UTF-8
    throw Error(path.string() + ": cannot write " + what + ": " + e.what());
  }
  write_file_atomically(path, text, what);
}

/// The directory `path` is in ("." for a bare name).
fs::path parent_directory(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

/// `output` without a trailing separator ("out/" -> "out"), so that it has a file name.
fs::path normalized_output(const fs::path& output) {
  fs::path path = output.lexically_normal();
  if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();
  return path;
}

/// Throws unless `output` is new and its parent an existing directory.
void check_output(const fs::path& output) {
  std::error_code error;
  if (output.empty() || fs::exists(fs::symlink_status(output, error))) {
    throw Error(output.string() + ": already exists; give a new directory for the export");
  }
  const fs::path parent = parent_directory(output);
  if (!fs::exists(parent, error)) throw Error(parent.string() + ": directory does not exist");
  if (!fs::is_directory(parent, error)) throw Error(parent.string() + ": is not a directory");
}

/// A staging directory beside the output: created empty (a stale one from an interrupted export
/// is removed first), removed again unless publish() moved it into place.
/// The files an export writes into its staging directory (and their atomic-write temporaries).
bool written_by_export(const std::string& name) {
  static const std::vector<std::string> names = {"model.bin",
                                                 "config.json",
                                                 "shared_vocabulary.json",
                                                 "source_vocabulary.json",
                                                 "target_vocabulary.json",
                                                 "sentencepiece.model",
                                                 "source.spm",
                                                 "target.spm"};
  const std::string base = name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0
                               ? name.substr(0, name.size() - 4)
                               : name;
  return std::find(names.begin(), names.end(), base) != names.end();
}

/// Removes the `.tmp` directory an interrupted export left. Anything else of that name (a file,
/// or a directory holding a file no export writes) is the user's: an nmt::Error naming it.
void remove_stale(const fs::path& path) {
  std::error_code error;
  const auto status = fs::symlink_status(path, error);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) {
    throw Error(path.string() + " exists and is not an interrupted export: move it away, or " +
                "choose another --output");
  }
  for (const auto& entry : fs::directory_iterator(path)) {
    std::error_code type_error;
    if (!entry.is_regular_file(type_error) ||
        !written_by_export(entry.path().filename().string())) {
      throw Error(path.string() + " holds " + entry.path().filename().string() +
                  ", which no export writes: it is not an interrupted export; move it away, "
                  "or choose another --output");
    }
  }
  remove_tree(path);
}

class StagingDirectory {
 public:
  explicit StagingDirectory(fs::path location) : path_(std::move(location)) {
    remove_stale(path_);
    std::error_code error;
    if (!fs::create_directory(path_, error)) {
      throw Error(parent_directory(path_).string() + ": cannot create the export directory " +
                  path_.filename().string() + " there: " + error.message());
    }
  }
  ~StagingDirectory() {
    if (published_) return;
    try {
      remove_tree(path_);
    } catch (const std::exception&) {  // never throw from a destructor; a leftover is harmless
    }
  }
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;

  const fs::path& path() const { return path_; }

  /// Renames the directory to `output` and makes the rename durable.
  void publish(const fs::path& output) {
    std::error_code error;
    fs::rename(path_, output, error);
    if (error) {
      throw Error(output.string() +
                  ": cannot move the finished export into place: " + error.message());
    }
    published_ = true;
    sync_directory(parent_directory(output));
  }

 private:
  fs::path path_;
  bool published_ = false;
};

/// Writes the vocabularies and SentencePiece models into `dir`; returns the file names.
std::vector<std::string> write_tokenizer_files(const fs::path& dir, const LoadedModel& loaded,
                                               const Ct2Vocabularies& vocab) {
  std::vector<std::string> names;
  if (vocab.shared()) {
    names.push_back("shared_vocabulary.json");
    write_json(dir / names.back(), vocab.target, "vocabulary");
  } else {
    names.push_back("source_vocabulary.json");
    names.push_back("target_vocabulary.json");
    write_json(dir / names[0], vocab.source, "source vocabulary");
    write_json(dir / names[1], vocab.target, "target vocabulary");
  }
  // The names Argos Translate (one joint model, sentencepiece.model) and OPUS-MT (source.spm,
  // target.spm) packages use; both sides tokenize with them before CTranslate2 sees pieces.
  std::vector<std::string> models = {"sentencepiece.model"};
  if (!loaded.tokenizer.joint()) models = {"source.spm", "target.spm"};
  std::vector<fs::path> paths;
  for (const auto& name : models) paths.push_back(dir / name);
  loaded.tokenizer.save(paths);
  names.insert(names.end(), models.begin(), models.end());
  return names;
}

}  // namespace

ExportResult export_ctranslate2(const LoadedModel& loaded, const std::filesystem::path& output,
                                const ExportOptions& options) {
  const fs::path target = normalized_output(output);
  check_output(target);
  // Everything that can fail on the model's account fails here, before anything is written.
  const Ct2Vocabularies vocab = ct2_vocabularies(loaded);
  const nlohmann::json config = ct2_config(vocab, ct2::layer_norm_epsilon(loaded.model));
  ct2::ModelBin bin = ct2::with_aliases(ct2::transformer_variables(loaded.model));
  ct2::quantize(bin, options.quantization);

  StagingDirectory staging(fs::path(target.string() + ".tmp"));
  std::vector<std::string> names = {"model.bin", "config.json"};
  write_file_atomically(staging.path() / names[0], ct2::ModelBinBytes(bin).pieces(),
                        "CTranslate2 model");
  write_json(staging.path() / names[1], config, "CTranslate2 config");
  const auto tokenizer_files = write_tokenizer_files(staging.path(), loaded, vocab);
  names.insert(names.end(), tokenizer_files.begin(), tokenizer_files.end());
  if (!options.vmap.empty()) {
    names.push_back("vmap.txt");
    write_file_atomically(staging.path() / names.back(), options.vmap, "vocabulary map");
  }
  staging.publish(target);

  ExportResult result;
  result.directory = target;
  result.variables = bin.variables.size();
  result.aliases = bin.aliases.size();
  for (const auto& name : names) result.files.push_back({name, fs::file_size(target / name)});
  return result;
}

}  // namespace nmt

#pragma once

// `nmt export --format ctranslate2`: a checkpoint as a model directory that CTranslate2 4.x
// (and so Argos Translate and LibreTranslate) loads as is. docs/deploy.md says what maps to what.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/choice.h"
#include "train/checkpoint.h"

namespace nmt {

/// How model.bin stores the weight matrices (token embeddings and linear layers); biases, layer
/// norms and position tables stay float32. As CTranslate2's own converters quantize
/// (python/ctranslate2/specs/model_spec.py): int8 with one scale per output row, int16 with one
/// scale per matrix. CTranslate2 converts again at load time if asked for another compute type.
enum class Ct2Quantization { kFloat32, kInt16, kInt8 };  ///< float32 | int16 | int8

template <>
struct ChoiceNames<Ct2Quantization> {
  static constexpr std::pair<Ct2Quantization, const char*> names[] = {
      {Ct2Quantization::kFloat32, "float32"},
      {Ct2Quantization::kInt16, "int16"},
      {Ct2Quantization::kInt8, "int8"}};
};

/// Options of a CTranslate2 export.
struct ExportOptions {
  Ct2Quantization quantization = Ct2Quantization::kFloat32;  ///< storage of the weight matrices
  /// vmap.txt, CTranslate2's vocabulary map (a lexical shortlist, decode/shortlist.h), or empty:
  /// none. CTranslate2 uses it when asked (use_vmap / --use_vmap).
  std::string vmap;
};

/// One file an export wrote.
struct ExportedFile {
  std::string name;     ///< file name inside the output directory
  uintmax_t bytes = 0;  ///< its size
};

/// What an export wrote.
struct ExportResult {
  std::filesystem::path directory;  ///< the output directory
  std::vector<ExportedFile> files;  ///< in the order written: model.bin first
  size_t variables = 0;             ///< tensors and attributes stored in model.bin
  size_t aliases = 0;               ///< names stored once and aliased (shared or tied weights)
};

/// Writes `model` into the new directory `output` as a CTranslate2 TransformerSpec model
/// (binary version 6): model.bin, config.json, the vocabularies (shared_vocabulary.json, or
/// source_vocabulary.json and target_vocabulary.json) and the SentencePiece model(s)
/// (sentencepiece.model, or source.spm and target.spm). The files are written into the sibling
/// `<output>.tmp`, which is renamed to `output` once complete, so `output` holds a whole export
/// or nothing. An existing `output`, a missing or unwritable parent directory, or a model the
/// format cannot express is an nmt::Error naming it.
ExportResult export_ctranslate2(const LoadedModel& model, const std::filesystem::path& output,
                                const ExportOptions& options = {});

}  // namespace nmt

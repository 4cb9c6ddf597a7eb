#include "train/checkpoint.h"

#include "core/json_fields.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include <torch/serialize.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "data/dataset.h"  // kWordCasingFile

namespace nmt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "nmt-checkpoint";
constexpr int64_t kFormatVersion = 1;

at::Tensor bytes_to_tensor(const std::string& bytes) {
  auto tensor = at::empty({int64_t(bytes.size())}, at::kByte);
  std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

std::string tensor_to_bytes(const at::Tensor& tensor) {
  const auto contiguous = tensor.contiguous().to(at::kCPU);
  return std::string(static_cast<const char*>(contiguous.data_ptr()), contiguous.numel());
}

json state_to_json(const TrainingState& s) { return fields_to_json(s); }

// Keys a checkpoint lacks keep their defaults: world_size 1 (before multi-process training),
// epochs_done -1 (before snapshot averaging), log_bytes and metrics_bytes -1 (before nmt 0.1).
TrainingState state_from_json(const json& j) { return fields_from_json<TrainingState>(j); }

/// Reads the metadata JSON and opens the archive, translating LibTorch errors.
json read_meta(torch::serialize::InputArchive& archive, const fs::path& path) {
  try {
    archive.load_from(path.string());
  } catch (const c10::Error&) {
    throw Error(path.string() + ": not a readable nmt checkpoint (corrupt or truncated file?)");
  }
  c10::IValue meta;
  if (!archive.try_read("meta", meta) || !meta.isString()) {
    throw Error(path.string() + ": not an nmt checkpoint (no metadata record)");
  }
  json parsed = json::parse(meta.toStringRef(), nullptr, false);
  if (parsed.is_discarded() || parsed.value("format", "") != kFormat) {
    throw Error(path.string() + ": not an nmt checkpoint (unknown metadata format)");
  }
  if (parsed.value("version", int64_t(0)) > kFormatVersion) {
    throw Error(path.string() + ": checkpoint format version " + parsed["version"].dump() +
                " is newer than this nmt supports (" + std::to_string(kFormatVersion) + ")");
  }
  return parsed;
}

}  // namespace

void save_checkpoint(const fs::path& path, const Config& config, Seq2Seq& model,
                     const Tokenizer& tokenizer, const TrainingState& state,
                     torch::optim::Optimizer* optimizer) {
  torch::serialize::OutputArchive archive;
  const json meta = {{"format", kFormat},
                     {"version", kFormatVersion},
                     {"config", config_to_json(config)},
                     {"state", state_to_json(state)},
                     {"tokenizer_models", tokenizer.serialized().size()},
                     {"training_weights", state.training_weights.size()}};
  archive.write("meta", c10::IValue(meta.dump()));
  torch::serialize::OutputArchive model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  const auto protos = tokenizer.serialized();
  for (size_t i = 0; i < protos.size(); ++i) {
    archive.write("tokenizer." + std::to_string(i), bytes_to_tensor(protos[i]));
  }
  if (const auto casing = tokenizer.word_casing()) {
    archive.write("word_casing", c10::IValue(casing->to_json().dump()));
  }
  if (state.rng_state.defined()) archive.write("rng_state", state.rng_state);
  if (state.accelerator_rng_state.defined()) {
    archive.write("accelerator_rng_state", state.accelerator_rng_state);
  }
  for (size_t i = 0; i < state.training_weights.size(); ++i) {
    archive.write("training_weight." + std::to_string(i), state.training_weights[i]);
  }
  if (optimizer != nullptr) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  // Serialized into memory first, then written and fsynced by us: LibTorch's own file writer
  // neither fsyncs nor reports a failed write cleanly (2.x aborts from a destructor).
  std::string bytes;
  try {
    archive.save_to([&bytes](const void* data, size_t size) {
      bytes.append(static_cast<const char*>(data), size);
      return size;
    });
  } catch (const c10::Error& e) {
    throw Error(path.string() + ": cannot serialize checkpoint (" + e.what_without_backtrace() +
                ")");
  }
  write_file_atomically(path, bytes, "checkpoint");
}

fs::path resolve_checkpoint(const fs::path& path) {
  if (fs::is_directory(path)) {
    for (const char* name : {"averaged.pt", "best.pt", "last.pt"}) {
      if (fs::exists(path / name)) return path / name;
    }
    throw Error(path.string() +
                ": run directory has no averaged.pt, best.pt or last.pt checkpoint");
  }
  if (!fs::exists(path)) throw Error(path.string() + ": checkpoint not found");
  return path;
}

namespace {

LoadedModel read_checkpoint(const fs::path& path, const at::Device& device) {
  torch::serialize::InputArchive archive;
  const json meta = read_meta(archive, path);
  std::vector<std::string> protos;
  for (int64_t i = 0; i < meta.at("tokenizer_models").get<int64_t>(); ++i) {
    at::Tensor bytes;
    archive.read("tokenizer." + std::to_string(i), bytes);
    protos.push_back(tensor_to_bytes(bytes));
  }
  LoadedModel loaded{config_from_json(meta.at("config"), path.string()), nullptr,
                     Tokenizer::from_serialized(protos), state_from_json(meta.at("state"))};
  // Word casing (data/word_casing.h) is in checkpoints since nmt learns it; an older one takes
  // its run directory's file (`nmt prepare` on the run's config writes it), or goes without.
  if (c10::IValue casing; archive.try_read("word_casing", casing) && casing.isString()) {
    const json parsed = json::parse(casing.toStringRef(), nullptr, false);
    if (parsed.is_discarded()) throw Error(path.string() + ": its word_casing record is not JSON");
    loaded.tokenizer.set_word_casing(
        WordCasing::from_json(parsed, path.string() + ": word_casing"));
  } else if (const auto file = path.parent_path() / kWordCasingFile; fs::exists(file)) {
    loaded.tokenizer.set_word_casing(WordCasing::read(file));
  }
  loaded.model = Seq2Seq(loaded.config.model, /*initialize=*/false);  // every weight is loaded
  // Module::load replaces each tensor with the stored one whatever its shape: compare them with
  // the shapes the config gives, or a foreign checkpoint fails later, deep in a forward pass.
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const auto& item : loaded.model->named_parameters()) {
    shapes.emplace_back(item.key(), item.value().sizes().vec());
  }
  try {
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    loaded.model->load(model_archive);
  } catch (const c10::Error& e) {
    throw Error(path.string() + ": model weights do not match its config (" +
                e.what_without_backtrace() + ")");
  }
  const auto loaded_parameters = loaded.model->named_parameters();
  for (const auto& [name, shape] : shapes) {
    const auto now = loaded_parameters[name].sizes().vec();
    if (now != shape) {
      throw Error(path.string() + ": model weights do not match its config (" + name + " is " +
                  c10::str(c10::IntArrayRef(now)) + ", the config gives " +
                  c10::str(c10::IntArrayRef(shape)) + ")");
    }
  }
  archive.try_read("rng_state", loaded.state.rng_state);
  archive.try_read("accelerator_rng_state", loaded.state.accelerator_rng_state);
  loaded.model->to(device);
  loaded.model->eval();
  return loaded;
}

}  // namespace

LoadedModel load_checkpoint(const fs::path& path_or_dir, const at::Device& device) {
  const fs::path path = resolve_checkpoint(path_or_dir);
  // Whatever a damaged or foreign file makes LibTorch or the JSON reader throw becomes one
  // error naming the file.
  try {
    return read_checkpoint(path, device);
  } catch (const json::exception& e) {
    throw Error(path.string() + ": damaged checkpoint metadata (" + e.what() + ")");
  } catch (const c10::Error& e) {
    throw Error(path.string() + ": damaged checkpoint (" + e.what_without_backtrace() + ")");
  }
}

TrainingState read_checkpoint_state(const fs::path& path) {
  torch::serialize::InputArchive archive;
  try {
    return state_from_json(read_meta(archive, path).at("state"));
  } catch (const json::exception& e) {
    throw Error(path.string() + ": damaged checkpoint metadata (" + e.what() + ")");
  }
}

std::vector<at::Tensor> load_training_weights(const fs::path& path,
                                              const std::vector<at::Tensor>& parameters) {
  torch::serialize::InputArchive archive;
  const json meta = read_meta(archive, path);
  const int64_t count = meta.value("training_weights", int64_t(0));
  if (count != 0 && count != int64_t(parameters.size())) {
    throw Error(path.string() + ": " + std::to_string(count) + " training weights for a model of " +
                std::to_string(parameters.size()) + " parameters (damaged checkpoint?)");
  }
  std::vector<at::Tensor> weights;
  for (int64_t i = 0; i < count; ++i) {
    at::Tensor weight;
    archive.read("training_weight." + std::to_string(i), weight);
    const auto& parameter = parameters[size_t(i)];
    if (!weight.sizes().equals(parameter.sizes())) {
      throw Error(path.string() + ": training weight " + std::to_string(i) + " is " +
                  c10::str(weight.sizes()) + ", its parameter " + c10::str(parameter.sizes()) +
                  " (damaged checkpoint?)");
    }
    weights.push_back(weight.to(parameter.device()));
  }
  return weights;
}

void load_optimizer_state(const fs::path& path, torch::optim::Optimizer& optimizer) {
  torch::serialize::InputArchive archive;
  read_meta(archive, path);
  torch::serialize::InputArchive optimizer_archive;
  if (!archive.try_read("optimizer", optimizer_archive)) {
    throw Error(path.string() + ": checkpoint has no optimizer state (averaged or exported?)");
  }
  optimizer.load(optimizer_archive);
}

}  // namespace nmt

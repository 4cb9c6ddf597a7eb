// export/ctranslate2.h: the CTranslate2 model directory, read back without CTranslate2. The
// reader below follows python/ctranslate2/specs/model_spec.py's layout (ModelSpec._serialize)
// on its own, so a writer that drifts from it fails here.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "decode_test_util.h"
#include "export/ctranslate2.h"
#include "export/ctranslate2_spec.h"
#include "model/embeddings.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt {
namespace ct2_export_test {

namespace fs = std::filesystem;

/// One model.bin variable as read back: shape, CTranslate2 DataType id, payload.
struct BinVariable {
  std::vector<int64_t> shape;
  int dtype = -1;
  std::string bytes;
};

/// A whole model.bin as read back.
struct BinFile {
  uint32_t version = 0;
  std::string spec;
  uint32_t revision = 0;
  std::vector<std::string> names;  ///< variables in file order
  std::map<std::string, BinVariable> variables;
  std::map<std::string, std::string> aliases;  ///< alias -> variable name

  bool has(const std::string& name) const {
    return variables.count(name) > 0 || aliases.count(name) > 0;
  }
  /// The variable called `name`, through its alias if it is one.
  const BinVariable& get(const std::string& name) const {
    const auto alias = aliases.find(name);
    const auto found = variables.find(alias == aliases.end() ? name : alias->second);
    if (found == variables.end()) throw std::runtime_error("model.bin has no variable " + name);
    return found->second;
  }
};

/// Little-endian fields of a byte string, front to back.
class BinReader {
 public:
  explicit BinReader(std::string data) : data_(std::move(data)) {}

  std::string take(size_t bytes) {
    if (pos_ + bytes > data_.size()) throw std::runtime_error("model.bin is truncated");
    std::string out = data_.substr(pos_, bytes);
    pos_ += bytes;
    return out;
  }
  uint64_t number(size_t bytes) {
    const std::string raw = take(bytes);
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) value |= uint64_t(uint8_t(raw[i])) << (8 * i);
    return value;
  }
  /// uint16 length (with the NUL), the bytes, a NUL.
  std::string text() {
    std::string value = take(size_t(number(2)));
    if (value.empty() || value.back() != '\0') throw std::runtime_error("string without NUL");
    value.pop_back();
    return value;
  }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::string data_;
  size_t pos_ = 0;
};

BinFile read_model_bin(const fs::path& path) {
  BinReader in(test::read_text(path));
  BinFile file;
  file.version = uint32_t(in.number(4));
  file.spec = in.text();
  file.revision = uint32_t(in.number(4));
  const uint64_t count = in.number(4);
  for (uint64_t i = 0; i < count; ++i) {
    const std::string name = in.text();
    BinVariable variable;
    const uint64_t rank = in.number(1);
    for (uint64_t d = 0; d < rank; ++d) variable.shape.push_back(int64_t(in.number(4)));
    variable.dtype = int(in.number(1));
    variable.bytes = in.take(size_t(in.number(4)));
    file.names.push_back(name);
    file.variables.emplace(name, std::move(variable));
  }
  const uint64_t aliases = in.number(4);
  for (uint64_t i = 0; i < aliases; ++i) {
    const std::string alias = in.text();
    file.aliases.emplace(alias, in.text());
  }
  if (!in.done()) throw std::runtime_error("model.bin has bytes after its aliases");
  return file;
}

/// The dtype of CTranslate2's DataType id (include/ctranslate2/types.h).
at::ScalarType scalar_type_of(int dtype) {
  switch (dtype) {
    case 0:
      return at::kFloat;
    case 1:
      return at::kChar;
    case 2:
      return at::kShort;
    case 3:
      return at::kInt;
    default:
      throw std::runtime_error("unexpected DataType id " + std::to_string(dtype));
  }
}

/// A read-back variable as a tensor.
at::Tensor as_tensor(const BinVariable& variable) {
  auto tensor =
      at::empty(variable.shape, at::TensorOptions().dtype(scalar_type_of(variable.dtype)));
  EXPECT_EQ(tensor.nbytes(), variable.bytes.size());
  std::memcpy(tensor.data_ptr(), variable.bytes.data(),
              std::min(tensor.nbytes(), variable.bytes.size()));
  return tensor;
}

int64_t attribute(const BinFile& file, const std::string& name) {
  const auto& variable = file.get(name);
  EXPECT_TRUE(variable.shape.empty()) << name << " is not an attribute";
  return as_tensor(variable).item<int64_t>();
}

std::vector<int64_t> shape_of(const BinFile& file, const std::string& name) {
  return file.get(name).shape;
}

nlohmann::json read_json(const fs::path& path) {
  return nlohmann::json::parse(test::read_text(path));
}

/// A seeded model of `config`, every parameter nudged off its initial value (so that no two
/// layer norms are equal and only tensors nmt shares alias), saved and loaded back: what
/// `nmt export` has in hand.
LoadedModel checkpoint_of(const fs::path& dir, const Config& config,
                          const Tokenizer& tokenizer = test::fixture_tokenizer()) {
  torch::manual_seed(7);
  Seq2Seq model(config.model);
  {
    torch::NoGradGuard no_grad;
    for (auto& weight : model->parameters()) weight.add_(torch::randn_like(weight) * 0.01);
  }
  save_checkpoint(dir / "model.pt", config, model, tokenizer, {});
  return load_checkpoint(dir / "model.pt", at::kCPU);
}

/// fixture_config() with the model options a test varies.
Config config_with(Norm norm, Activation activation, Positions positions, bool shared_and_tied) {
  Config config = test::fixture_config();
  config.model.norm = norm;
  config.model.activation = activation;
  config.model.positions = positions;
  config.model.share_embeddings = shared_and_tied;
  config.model.tie_output = shared_and_tied;
  return config;
}

std::vector<std::string> file_names(const ExportResult& result) {
  std::vector<std::string> names;
  for (const auto& file : result.files) names.push_back(file.name);
  return names;
}

at::Tensor parameter(const LoadedModel& loaded, const std::string& name) {
  return loaded.model->named_parameters()[name];
}

// A post-norm ReLU model with learned positions: every name, shape and attribute of the spec.
TEST(ExportCt2, WritesTheTransformerSpecLayout) {
  const auto dir = test::temp_dir("export_layout");
  const auto loaded = checkpoint_of(dir, test::fixture_config());
  const auto result = export_ctranslate2(loaded, dir / "ct2");
  const int64_t vocab = test::fixture_tokenizer().tgt_vocab_size();
  const BinFile bin = read_model_bin(dir / "ct2" / "model.bin");
  EXPECT_EQ(bin.version, 6u);
  EXPECT_EQ(bin.spec, "TransformerSpec");
  EXPECT_EQ(bin.revision, 7u);
  EXPECT_TRUE(std::is_sorted(bin.names.begin(), bin.names.end()));
  // Encoder: 6 attributes, 2 tables, 12 per layer; decoder: 10, 2, 20 per layer, projection.
  EXPECT_EQ(bin.names.size(), 86u);
  EXPECT_TRUE(bin.aliases.empty());
  EXPECT_EQ(result.variables, 86u);
  EXPECT_EQ(attribute(bin, "encoder/num_heads"), 4);
  EXPECT_EQ(bin.get("encoder/num_heads").dtype, 2);  // int16, as the Python spec stores it
  EXPECT_EQ(attribute(bin, "encoder/pre_norm"), 0);
  EXPECT_EQ(attribute(bin, "decoder/activation"), 0);  // ReLU
  EXPECT_EQ(attribute(bin, "decoder/scale_embeddings"), 1);
  EXPECT_EQ(attribute(bin, "decoder/alignment_layer"), -1);
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(shape_of(bin, "encoder/embeddings_0/weight"), (Shape{vocab, 32}));
  EXPECT_EQ(shape_of(bin, "encoder/position_encodings/encodings"), (Shape{64, 32}));
  EXPECT_EQ(shape_of(bin, "encoder/layer_1/self_attention/linear_0/weight"), (Shape{96, 32}));
  EXPECT_EQ(shape_of(bin, "encoder/layer_1/self_attention/linear_0/bias"), (Shape{96}));
  EXPECT_EQ(shape_of(bin, "decoder/layer_0/attention/linear_0/weight"), (Shape{32, 32}));
  EXPECT_EQ(shape_of(bin, "decoder/layer_0/attention/linear_1/weight"), (Shape{64, 32}));
  EXPECT_EQ(shape_of(bin, "decoder/layer_0/attention/linear_2/weight"), (Shape{32, 32}));
  EXPECT_EQ(shape_of(bin, "decoder/layer_1/ffn/linear_0/weight"), (Shape{64, 32}));
  EXPECT_EQ(shape_of(bin, "decoder/layer_1/ffn/linear_1/weight"), (Shape{32, 64}));
  EXPECT_EQ(shape_of(bin, "decoder/projection/weight"), (Shape{vocab, 32}));
  EXPECT_FALSE(bin.has("encoder/layer_norm/gamma"));  // post-norm: no final norms
  EXPECT_FALSE(bin.has("decoder/layer_2/ffn/linear_0/weight"));
  for (const auto& [name, variable] : bin.variables) {
    if (!variable.shape.empty()) {
      EXPECT_EQ(variable.dtype, 0) << name;  // float32
    }
  }
}

TEST(ExportCt2, WritesConfigVocabularyAndTokenizer) {
  const auto dir = test::temp_dir("export_files");
  const auto loaded = checkpoint_of(dir, test::fixture_config());
  const auto result = export_ctranslate2(loaded, dir / "ct2");
  EXPECT_EQ(file_names(result),
            (std::vector<std::string>{"model.bin", "config.json", "shared_vocabulary.json",
                                      "sentencepiece.model"}));
  const auto config = read_json(dir / "ct2" / "config.json");
  EXPECT_EQ(config.at("add_source_bos"), false);
  EXPECT_EQ(config.at("add_source_eos"), true);
  EXPECT_EQ(config.at("bos_token"), "<s>");
  EXPECT_EQ(config.at("decoder_start_token"), "<s>");
  EXPECT_EQ(config.at("eos_token"), "</s>");
  EXPECT_EQ(config.at("unk_token"), "<unk>");
  EXPECT_NEAR(config.at("layer_norm_epsilon").get<double>(), 1e-5, 1e-12);
  const auto& tokenizer = test::fixture_tokenizer();
  std::vector<int64_t> ids(size_t(tokenizer.tgt_vocab_size()));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int64_t(i);
  EXPECT_EQ(read_json(dir / "ct2" / "shared_vocabulary.json").get<std::vector<std::string>>(),
            tokenizer.tgt_pieces(ids));
  EXPECT_EQ(test::read_text(dir / "ct2" / "sentencepiece.model"), tokenizer.serialized().front());
  EXPECT_FALSE(fs::exists(dir / "ct2.tmp"));
}

TEST(ExportCt2, WritesTheShortlistAsVmap) {
  const auto dir = test::temp_dir("export_vmap");
  const auto loaded = checkpoint_of(dir, test::fixture_config());
  ExportOptions options;
  options.vmap = "\t</s> .\n";
  const auto result = export_ctranslate2(loaded, dir / "ct2", options);
  EXPECT_EQ(file_names(result).back(), "vmap.txt");
  EXPECT_EQ(test::read_text(dir / "ct2" / "vmap.txt"), options.vmap);
}

// float32 export stores nmt's own numbers: q, k, v stacked, nothing rounded.
TEST(ExportCt2, Float32WeightsRoundTripExactly) {
  const auto dir = test::temp_dir("export_float32");
  const auto loaded = checkpoint_of(dir, test::fixture_config());
  export_ctranslate2(loaded, dir / "ct2");
  const BinFile bin = read_model_bin(dir / "ct2" / "model.bin");
  const auto expect_equal = [&](const std::string& name, const at::Tensor& expected) {
    EXPECT_TRUE(torch::equal(as_tensor(bin.get(name)), expected)) << name;
  };
  const auto self = [&](const std::string& name) {
    return parameter(loaded, "encoder.layers.0.self_attention." + name);
  };
  const auto cross = [&](const std::string& name) {
    return parameter(loaded, "decoder.layers.1.cross_attention." + name);
  };
  expect_equal("encoder/layer_0/self_attention/linear_0/weight",
               torch::cat({self("fc_q.weight"), self("fc_k.weight"), self("fc_v.weight")}));
  expect_equal("encoder/layer_0/self_attention/linear_1/bias", self("fc_o.bias"));
  expect_equal("decoder/layer_1/attention/linear_0/weight", cross("fc_q.weight"));
  expect_equal("decoder/layer_1/attention/linear_1/bias",
               torch::cat({cross("fc_k.bias"), cross("fc_v.bias")}));
  expect_equal("decoder/layer_1/attention/layer_norm/gamma",
               parameter(loaded, "decoder.layers.1.cross_attention_norm.weight"));
  expect_equal("decoder/layer_1/ffn/layer_norm/beta",
               parameter(loaded, "decoder.layers.1.feedforward_norm.bias"));
  expect_equal("decoder/projection/weight", parameter(loaded, "decoder.output.weight"));
  expect_equal("encoder/position_encodings/encodings",
               parameter(loaded, "encoder.embeddings.positions.weight"));
}

// Pre-norm, GELU, sinusoidal positions, shared and tied embeddings: the flags, the final norms,
// nmt's own sinusoid table, and each shared tensor stored once.
TEST(ExportCt2, PreNormGeluSinusoidalSharedAndTied) {
  const auto dir = test::temp_dir("export_pre_norm");
  const auto loaded =
      checkpoint_of(dir, config_with(Norm::kPre, Activation::kGelu, Positions::kSinusoidal, true));
  export_ctranslate2(loaded, dir / "ct2");
  const BinFile bin = read_model_bin(dir / "ct2" / "model.bin");
  EXPECT_EQ(attribute(bin, "encoder/pre_norm"), 1);
  EXPECT_EQ(attribute(bin, "decoder/pre_norm"), 1);
  EXPECT_EQ(attribute(bin, "encoder/activation"), 3);  // GELU (erf), not GELUTanh (1)
  EXPECT_TRUE(torch::equal(as_tensor(bin.get("encoder/layer_norm/gamma")),
                           parameter(loaded, "encoder.final_norm.weight")));
  EXPECT_TRUE(torch::equal(as_tensor(bin.get("decoder/layer_norm/beta")),
                           parameter(loaded, "decoder.final_norm.bias")));
  EXPECT_TRUE(torch::equal(as_tensor(bin.get("encoder/position_encodings/encodings")),
                           sinusoidal_positions(64, 32)));
  const std::map<std::string, std::string> aliases = {
      {"decoder/projection/weight", "decoder/embeddings/weight"},
      {"encoder/embeddings_0/weight", "decoder/embeddings/weight"},
      {"encoder/position_encodings/encodings", "decoder/position_encodings/encodings"}};
  EXPECT_EQ(bin.aliases, aliases);
  EXPECT_TRUE(torch::equal(as_tensor(bin.get("decoder/embeddings/weight")),
                           parameter(loaded, "encoder.embeddings.tokens.weight")));
  EXPECT_TRUE(torch::equal(as_tensor(bin.get("decoder/projection/bias")),
                           parameter(loaded, "decoder.output_bias")));
}

TEST(ExportCt2, Int8RowsRoundToTheNearestStepAndKeepHalfToEven) {
  const auto q = ct2::quantize_int8_rows(torch::tensor({{0.0f, 0.0f}, {1.0f, -2.0f}}));
  EXPECT_EQ(q.values.scalar_type(), at::kChar);
  EXPECT_TRUE(torch::equal(q.scale, torch::tensor({1.0f, 63.5f})));  // a zero row: 127 / 127
  // 1 · 63.5 = 63.5 rounds to the even 64, as numpy's rint does in CTranslate2's converter.
  EXPECT_TRUE(torch::equal(q.values, torch::tensor({{0, 0}, {64, -127}}, at::kChar)));
}

TEST(ExportCt2, Int16UsesOneScaleOfTenBits) {
  const auto q = ct2::quantize_int16(torch::tensor({{0.5f, -1.0f}, {0.25f, 0.0f}}));
  EXPECT_EQ(q.scale.dim(), 0);
  EXPECT_FLOAT_EQ(q.scale.item<float>(), 1024.0f);
  EXPECT_TRUE(torch::equal(q.values, torch::tensor({{512, -1024}, {256, 0}}, at::kShort)));
}

TEST(ExportCt2, Int8StoresPerRowScalesWithinHalfAStep) {
  const auto dir = test::temp_dir("export_int8");
  const auto loaded =
      checkpoint_of(dir, config_with(Norm::kPost, Activation::kRelu, Positions::kLearned, true));
  ExportOptions options;
  options.quantization = Ct2Quantization::kInt8;
  export_ctranslate2(loaded, dir / "ct2", options);
  const BinFile bin = read_model_bin(dir / "ct2" / "model.bin");
  for (const auto& [name, module] : std::map<std::string, std::string>{
           {"decoder/layer_0/ffn/linear_1", "decoder.layers.0.feedforward.fc_2"},
           {"encoder/layer_1/self_attention/linear_1", "encoder.layers.1.self_attention.fc_o"}}) {
    const auto& weight = bin.get(name + "/weight");
    EXPECT_EQ(weight.dtype, 1) << name;  // int8
    const auto scale = as_tensor(bin.get(name + "/weight_scale"));
    const auto original = parameter(loaded, module + ".weight");
    ASSERT_EQ(scale.dim(), 1) << name;
    ASSERT_EQ(scale.size(0), original.size(0)) << name;
    const auto restored = as_tensor(weight).to(at::kFloat) / scale.unsqueeze(1);
    const auto step = (0.5 / scale).unsqueeze(1) + 1e-6;
    EXPECT_TRUE((restored - original).abs().le(step).all().item<bool>()) << name;
    EXPECT_EQ(bin.get(name + "/bias").dtype, 0) << name;  // biases stay float32
  }
  // The shared table is quantized once; its aliases find its scale through the same name.
  EXPECT_EQ(bin.get("encoder/embeddings_0/weight").dtype, 1);
  EXPECT_TRUE(bin.has("decoder/embeddings/weight_scale"));
  EXPECT_EQ(bin.get("encoder/position_encodings/encodings").dtype, 0);
}

TEST(ExportCt2, Int16StoresOneScalePerMatrix) {
  const auto dir = test::temp_dir("export_int16");
  const auto loaded = checkpoint_of(dir, test::fixture_config());
  ExportOptions options;
  options.quantization = Ct2Quantization::kInt16;
  export_ctranslate2(loaded, dir / "ct2", options);
  const BinFile bin = read_model_bin(dir / "ct2" / "model.bin");
  const auto& weight = bin.get("decoder/projection/weight");
  EXPECT_EQ(weight.dtype, 2);
  const auto scale = as_tensor(bin.get("decoder/projection/weight_scale"));
  ASSERT_EQ(scale.dim(), 0);
  const auto original = parameter(loaded, "decoder.output.weight");
  EXPECT_FLOAT_EQ(scale.item<float>(), 1024.0f / original.abs().max().item<float>());
  const auto restored = as_tensor(weight).to(at::kFloat) / scale;
  EXPECT_LE((restored - original).abs().max().item<float>(), 0.5f / scale.item<float>() + 1e-6f);
}

TEST(ExportCt2, SeparateTokenizersGiveTwoVocabulariesAndModels) {
  const auto dir = test::temp_dir("export_separate");
  const fs::path fixtures = NMT_FIXTURES_DIR;
  Config config = test::fixture_config();
  config.data.joint_vocab = false;
  const auto text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  const auto tokenizer = Tokenizer::train(config.data, text.src, text.tgt, dir / "spm");
  config.model.src_vocab_size = tokenizer.src_vocab_size();
  config.model.tgt_vocab_size = tokenizer.tgt_vocab_size();
  const auto loaded = checkpoint_of(dir, config, tokenizer);
  const auto result = export_ctranslate2(loaded, dir / "ct2");
  EXPECT_EQ(file_names(result),
            (std::vector<std::string>{"model.bin", "config.json", "source_vocabulary.json",
                                      "target_vocabulary.json", "source.spm", "target.spm"}));
  const auto source =
      read_json(dir / "ct2" / "source_vocabulary.json").get<std::vector<std::string>>();
  ASSERT_EQ(int64_t(source.size()), tokenizer.src_vocab_size());
  // The source model's pieces of a sentence sit at the positions of its ids.
  const auto ids = tokenizer.encode_src(text.src.front());
  const auto pieces = tokenizer.src_pieces(text.src.front());
  ASSERT_EQ(ids.size(), pieces.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(source.at(size_t(ids[i])), pieces[i]);
  EXPECT_EQ(test::read_text(dir / "ct2" / "target.spm"), tokenizer.serialized().back());
}

TEST(ExportCt2, ExistingOutputOrBadParentIsAnErrorAndLeavesNothing) {
  const auto dir = test::temp_dir("export_errors");
  const auto loaded = checkpoint_of(dir, test::fixture_config());
  fs::create_directory(dir / "taken");
  test::expect_error([&] { export_ctranslate2(loaded, dir / "taken"); }, "taken: already exists");
  test::expect_error([&] { export_ctranslate2(loaded, dir / "missing" / "ct2"); },
                     "missing: directory does not exist");
  std::ofstream(dir / "file") << "not a directory";
  test::expect_error([&] { export_ctranslate2(loaded, dir / "file" / "ct2"); },
                     "file: is not a directory");
  EXPECT_FALSE(fs::exists(dir / "taken.tmp"));
  EXPECT_TRUE(fs::is_empty(dir / "taken"));
  // A stale staging directory of an interrupted export is replaced; a trailing slash is fine.
  fs::create_directory(dir / "ct2.tmp");
  std::ofstream(dir / "ct2.tmp" / "model.bin") << "partial";
  export_ctranslate2(loaded, (dir / "ct2").string() + "/");
  EXPECT_FALSE(fs::exists(dir / "ct2.tmp"));
  EXPECT_EQ(read_model_bin(dir / "ct2" / "model.bin").spec, "TransformerSpec");
  // A `.tmp` that holds something no export writes is the user's: refused, left as it is.
  fs::create_directory(dir / "mine.tmp");
  std::ofstream(dir / "mine.tmp" / "notes.txt") << "keep me";
  test::expect_error([&] { export_ctranslate2(loaded, dir / "mine"); },
                     "mine.tmp holds notes.txt, which no export writes");
  EXPECT_EQ(test::read_text(dir / "mine.tmp" / "notes.txt"), "keep me");
  std::ofstream(dir / "other.tmp") << "a file";
  test::expect_error([&] { export_ctranslate2(loaded, dir / "other"); },
                     "other.tmp exists and is not an interrupted export");
}

TEST(ExportCt2, UnknownQuantizationListsTheValidOnes) {
  test::expect_error([] { require_choice<Ct2Quantization>("--quantization", "int4"); },
                     "--quantization 'int4' is not valid: choose one of float32, int16, int8");
}

TEST(CmdExport, WritesTheDirectoryAndListsTheFiles) {
  const auto dir = test::temp_dir("export_cli");
  checkpoint_of(dir, test::fixture_config());
  const auto run = test::run_nmt("export --checkpoint " + (dir / "model.pt").string() +
                                     " --format ctranslate2 --quantization int8 --output " +
                                     (dir / "ct2").string(),
                                 "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("int8 weights"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("model.bin"), std::string::npos) << run.out;
  EXPECT_EQ(read_model_bin(dir / "ct2" / "model.bin").get("decoder/projection/weight").dtype, 1);
}

TEST(CmdExport, UnknownFormatOrQuantizationIsAnError) {
  const auto dir = test::temp_dir("export_cli_errors");
  const std::string base =
      "export --checkpoint " + (dir / "none.pt").string() + " --output " + (dir / "ct2").string();
  auto run = test::run_nmt(base + " --format onnx", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("--format 'onnx' is not valid: choose one of ctranslate2"),
            std::string::npos)
      << run.err;
  run = test::run_nmt(base + " --quantization int4", "", dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("choose one of float32, int16, int8"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir / "ct2"));
}

}  // namespace ct2_export_test
}  // namespace nmt

#pragma once

// Fixtures shared by the decode-layer tests (translator, average): a SentencePiece model trained
// once per process on tests/fixtures/tiny.*, and small seeded random models over its vocabulary.

#include <torch/torch.h>

#include <filesystem>

#include "core/config.h"
#include "core/special_ids.h"
#include "data/corpus.h"
#include "data/tokenizer.h"
#include "model/seq2seq.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace nmt::test {

/// A joint unigram tokenizer (vocab 150) over the fixture corpus, trained once per process.
inline const Tokenizer& fixture_tokenizer() {
  static const Tokenizer tokenizer = [] {
    const std::filesystem::path fixtures = NMT_FIXTURES_DIR;
    DataConfig data;
    data.dir = fixtures.string();
    data.train = {CorpusSpec::of_split("tiny")};
    data.vocab_size = 150;
    const auto text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
    return Tokenizer::train(data, text.src, text.tgt, temp_dir("decode_spm"));
  }();
  return tokenizer;
}

/// A tiny dropout-free model config (2 + 2 layers, d_model 32) over the given vocabularies.
inline ModelConfig small_model_config(int64_t src_vocab, int64_t tgt_vocab, int64_t max_len = 64) {
  ModelConfig config;
  config.d_model = 32;
  config.n_heads = 4;
  config.encoder_layers = 2;
  config.decoder_layers = 2;
  config.d_ff = 64;
  config.dropout = 0.0;
  config.attention_dropout = 0.0;
  config.max_len = max_len;
  config.src_vocab_size = src_vocab;
  config.tgt_vocab_size = tgt_vocab;
  return config;
}

/// A tiny model config over the fixture tokenizer's vocabularies.
inline ModelConfig fixture_model_config(int64_t max_len = 64) {
  return small_model_config(fixture_tokenizer().src_vocab_size(),
                            fixture_tokenizer().tgt_vocab_size(), max_len);
}

/// A seeded random model of shape `config` in eval mode; `eos_bias` is added to eos' logit, so
/// hypotheses end early (positive) or never (very negative: every call yields max-length output).
inline Seq2Seq seeded_model(const ModelConfig& config, uint64_t seed, double eos_bias = 0.0) {
  torch::manual_seed(seed);
  Seq2Seq model(config);
  torch::NoGradGuard no_grad;
  model->decoder->output->bias[kEosId] += eos_bias;
  model->eval();
  return model;
}

/// seeded_model over the fixture tokenizer's vocabularies.
inline Seq2Seq fixture_model(uint64_t seed, double eos_bias = 0.0, int64_t max_len = 64) {
  return seeded_model(fixture_model_config(max_len), seed, eos_bias);
}

/// A full config for checkpoints of fixture_model (en -> de over the fixture data).
inline Config fixture_config(int64_t max_len = 64) {
  Config config;
  config.model = fixture_model_config(max_len);
  config.data.dir = NMT_FIXTURES_DIR;
  config.data.train = {CorpusSpec::of_split("tiny")};
  config.data.valid = {CorpusSpec::of_split("tiny_val")};
  config.data.vocab_size = 150;
  config.data.max_len = max_len - 1;  // eos/bos
  config.decode.max_len_offset = 5;
  return config;
}

/// fixture_model(seed) saved with fixture_config and fixture_tokenizer as `dir`/m.pt, for the
/// tests that run the nmt binary on it. Returns the file.
inline std::filesystem::path save_fixture_checkpoint(const std::filesystem::path& dir,
                                                     uint64_t seed = 6) {
  auto model = fixture_model(seed);
  save_checkpoint(dir / "m.pt", fixture_config(), model, fixture_tokenizer(), {});
  return dir / "m.pt";
}

}  // namespace nmt::test

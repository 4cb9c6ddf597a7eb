#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/special_ids.h"
#include "data/corpus.h"
#include "data/tokenizer.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = NMT_FIXTURES_DIR;

DataConfig fixture_config(const std::string& type, bool joint) {
  DataConfig data;
  data.dir = kFixtures.string();
  data.train = {CorpusSpec::of_split("tiny")};
  data.valid = {CorpusSpec::of_split("tiny_val")};
  data.vocab_type = require_choice<VocabType>("type", type);
  data.joint_vocab = joint;
  data.vocab_size = joint ? 200 : 120;
  return data;
}

const ParallelText& fixture_train() {
  static const ParallelText text = read_parallel(kFixtures / "tiny.en", kFixtures / "tiny.de");
  return text;
}

Tokenizer train_fixture(const DataConfig& data, const fs::path& dir) {
  return Tokenizer::train(data, fixture_train().src, fixture_train().tgt, dir);
}

/// decode(encode(s)) == s on every line of both fixture splits (the text is already in the
/// normalised form nmt_nfkc produces: NFC, single spaces).
void expect_round_trip(const Tokenizer& tokenizer) {
  const auto val = read_parallel(kFixtures / "tiny_val.en", kFixtures / "tiny_val.de");
  for (const auto* text : {&fixture_train(), &val}) {
    for (size_t i = 0; i < text->size(); ++i) {
      EXPECT_EQ(tokenizer.decode_src(tokenizer.encode_src(text->src[i])), text->src[i]);
      EXPECT_EQ(tokenizer.decode_tgt(tokenizer.encode_tgt(text->tgt[i])), text->tgt[i]);
    }
  }
}

class TokenizerTypes : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(TokenizerTypes, TrainsOnTheFixtureAndRoundTrips) {
  const auto& [type, joint] = GetParam();
  const auto dir = test::temp_dir("tok_" + type + (joint ? "_joint" : "_separate"));
  const DataConfig data = fixture_config(type, joint);
  const Tokenizer tokenizer = train_fixture(data, dir);
  EXPECT_EQ(tokenizer.joint(), joint);
  EXPECT_GT(tokenizer.src_vocab_size(), 50);
  EXPECT_LE(tokenizer.src_vocab_size(), data.vocab_size);
  EXPECT_LE(tokenizer.tgt_vocab_size(), data.vocab_size);
  if (joint) {
    EXPECT_TRUE(fs::exists(dir / "spm.model"));
    EXPECT_EQ(tokenizer.serialized().size(), 1u);
  } else {
    EXPECT_TRUE(fs::exists(dir / "spm.en.model"));
    EXPECT_TRUE(fs::exists(dir / "spm.de.model"));
    EXPECT_EQ(tokenizer.serialized().size(), 2u);
  }
  // Training leaves nothing but the model file(s) behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), joint ? 1 : 2);
  expect_round_trip(tokenizer);
}

std::string type_name(const ::testing::TestParamInfo<TokenizerTypes::ParamType>& param) {
  return std::get<0>(param.param) + (std::get<1>(param.param) ? "Joint" : "Separate");
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, TokenizerTypes,
                         ::testing::Combine(::testing::Values("unigram", "bpe"), ::testing::Bool()),
                         type_name);

TEST(Tokenizer, SpecialIdsAreFixedAndNeverEncoded) {
  const Tokenizer tokenizer =
      train_fixture(fixture_config("unigram", true), test::temp_dir("tok_ids"));
  EXPECT_EQ(tokenizer.tgt_pieces({kPadId, kUnkId, kBosId, kEosId}),
            (std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>"}));
  const auto ids = tokenizer.encode_tgt("ein Mann fährt ein rotes Fahrrad .");
  ASSERT_FALSE(ids.empty());
  for (const int64_t id : ids) EXPECT_GT(id, kEosId);
  // Model output carries bos/eos/pad: decoding skips them.
  std::vector<int64_t> framed{kBosId};
  framed.insert(framed.end(), ids.begin(), ids.end());
  framed.insert(framed.end(), {kEosId, kPadId, kPadId});
  EXPECT_EQ(tokenizer.decode_tgt(framed), "ein Mann fährt ein rotes Fahrrad .");
  EXPECT_EQ(tokenizer.src_pieces("a man").front(), "▁a");
  test::expect_error([&] { tokenizer.decode_tgt({tokenizer.tgt_vocab_size()}); },
                     "outside the vocabulary");
}

/// Every line of the fixture's target side sampled once, inside with_sampling_seed(seed).
std::vector<std::vector<int64_t>> sample_all(const Tokenizer& tokenizer, uint32_t seed,
                                             int64_t nbest, double alpha) {
  std::vector<std::vector<int64_t>> out;
  Tokenizer::with_sampling_seed(seed, [&] {
    for (const auto& line : fixture_train().tgt)
      out.push_back(tokenizer.sample_tgt(line, nbest, alpha));
  });
  return out;
}

// Subword regularization: samples decode to the original text, differ from the best
// segmentation, repeat exactly for a seed and change with it; for unigram (all segmentations
// and n-best) and for BPE-dropout.
TEST_P(TokenizerTypes, SampledSegmentationsRoundTripAndRepeatPerSeed) {
  const auto& [type, joint] = GetParam();
  const Tokenizer tokenizer =
      train_fixture(fixture_config(type, joint), test::temp_dir("tok_sample_" + type));
  for (const int64_t nbest : {int64_t{-1}, int64_t{8}}) {
    const double alpha = type == "bpe" ? 0.1 : 0.2;
    const auto a = sample_all(tokenizer, 7, nbest, alpha);
    EXPECT_EQ(sample_all(tokenizer, 7, nbest, alpha), a) << "nbest " << nbest;
    EXPECT_NE(sample_all(tokenizer, 8, nbest, alpha), a) << "nbest " << nbest;
    const auto& lines = fixture_train().tgt;
    size_t differ = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(tokenizer.decode_tgt(a[i]), lines[i]);
      differ += a[i] != tokenizer.encode_tgt(lines[i]);
    }
    EXPECT_GT(differ, lines.size() / 10) << "nbest " << nbest;  // sampling really samples
  }
  test::expect_error([&] { sample_all(tokenizer, 1, 513, 0.1); }, "data.subword_nbest = 513");
}

TEST(Tokenizer, TrainingIsDeterministic) {
  const auto data = fixture_config("unigram", true);
  const Tokenizer a = train_fixture(data, test::temp_dir("tok_det_a"));
  const Tokenizer b = train_fixture(data, test::temp_dir("tok_det_b"));
  EXPECT_EQ(a.serialized(), b.serialized());
}

TEST(Tokenizer, SerializedAndFileModelsMatchTheTrainedOnes) {
  const auto dir = test::temp_dir("tok_serialized");
  const auto data = fixture_config("bpe", false);
  const Tokenizer trained = train_fixture(data, dir);
  const Tokenizer restored = Tokenizer::from_serialized(trained.serialized());
  const Tokenizer loaded = Tokenizer::load(Tokenizer::model_files(data, dir));
  EXPECT_FALSE(restored.joint());
  EXPECT_EQ(restored.serialized(), trained.serialized());
  EXPECT_EQ(loaded.serialized(), trained.serialized());
  const std::string en = "two dogs are playing in the snow .";
  const std::string de = "zwei Hunde spielen im Schnee .";
  EXPECT_EQ(restored.encode_src(en), trained.encode_src(en));
  EXPECT_EQ(loaded.encode_tgt(de), trained.encode_tgt(de));
  EXPECT_EQ(restored.decode_tgt(restored.encode_tgt(de)), de);

  const Tokenizer joint = Tokenizer::from_serialized(
      train_fixture(fixture_config("unigram", true), test::temp_dir("tok_serialized_joint"))
          .serialized());
  EXPECT_TRUE(joint.joint());
}

TEST(Tokenizer, IdentityNormalizationKeepsFullWidthPunctuation) {
  // German targets written with Chinese punctuation: "，" and "？" in every sentence.
  std::vector<std::string> tgt = fixture_train().tgt;
  for (auto& line : tgt) line = "\xEF\xBC\x8C" + line + "\xEF\xBC\x9F";  // "，" ... "？"
  const std::string written =
      "\xEF\xBC\x8C"
      "zwei Hunde"
      "\xEF\xBC\x9F";
  DataConfig data = fixture_config("unigram", true);
  const Tokenizer nfkc =
      Tokenizer::train(data, fixture_train().src, tgt, test::temp_dir("tok_nfkc"));
  EXPECT_EQ(nfkc.decode_tgt(nfkc.encode_tgt(written)), ",zwei Hunde?");
  data.normalization = Normalization::kIdentity;
  const Tokenizer identity =
      Tokenizer::train(data, fixture_train().src, tgt, test::temp_dir("tok_identity"));
  EXPECT_EQ(identity.decode_tgt(identity.encode_tgt(written)), written);
  // The rule travels in the model: a reloaded tokenizer keeps the punctuation too.
  const Tokenizer restored = Tokenizer::from_serialized(identity.serialized());
  EXPECT_EQ(restored.decode_tgt(restored.encode_tgt(written)), written);
}

TEST(Tokenizer, MissingOrCorruptModelIsAnErrorNamingTheFile) {
  const auto dir = test::temp_dir("tok_errors");
  test::expect_error([&] { Tokenizer::load({dir / "absent.model"}); },
                     "not found: '" + (dir / "absent.model").string() + "'");
  std::ofstream(dir / "corrupt.model") << "this is not a protobuf";
  test::expect_error([&] { Tokenizer::load({dir / "corrupt.model"}); },
                     "'" + (dir / "corrupt.model").string() + "'");
  test::expect_error([&] { Tokenizer::from_serialized({"garbage"}); }, "corrupt");
  test::expect_error([&] { Tokenizer::from_serialized({}); }, "got 0");
}

TEST(Tokenizer, TooSmallVocabularyIsAnErrorNamingTheSetting) {
  DataConfig data = fixture_config("unigram", true);
  data.vocab_size = 16;  // below the fixture's character count
  test::expect_error([&] { train_fixture(data, test::temp_dir("tok_small")); },
                     "data.vocab_size=16");
}

}  // namespace
}  // namespace nmt

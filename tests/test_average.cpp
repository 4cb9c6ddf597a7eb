#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "decode_test_util.h"
#include "train/average.h"
#include "train/checkpoint.h"

namespace nmt {
namespace {

TEST(Average, ParameterAveragerGivesTheElementWiseMean) {
  auto a = test::fixture_model(1), b = test::fixture_model(2), c = test::fixture_model(3);
  ParameterAverager averager;
  for (auto* m : {&a, &b, &c}) averager.add(**m, "m");
  auto out = test::fixture_model(4);
  averager.write_to(*out);
  const auto name = "decoder.output.weight";
  const auto expected =
      (a->named_parameters()[name] + b->named_parameters()[name] + c->named_parameters()[name]) / 3;
  EXPECT_TRUE(torch::allclose(out->named_parameters()[name], expected, 1e-6, 1e-6));
  EXPECT_EQ(averager.count(), 3);
}

TEST(Average, ShapeMismatchNamesTheTensor) {
  ParameterAverager averager;
  averager.add(*test::fixture_model(1), "a.pt");
  torch::manual_seed(1);
  auto config = test::fixture_model_config();
  config.d_ff = 32;
  test::expect_error([&] { averager.add(*Seq2Seq(config), "b.pt"); }, "b.pt: tensor '");
}

TEST(Average, FirstModelDifferenceNamesTheKey) {
  Config a = test::fixture_config(), b = test::fixture_config();
  EXPECT_FALSE(first_model_difference(a, b).has_value());
  b.data.dir = "elsewhere";  // not a model key: still averageable
  EXPECT_FALSE(first_model_difference(a, b).has_value());
  b.model.n_heads = 2;
  EXPECT_EQ(first_model_difference(a, b).value(), "model.n_heads: 4 vs 2");
}

TEST(Average, AveragesCheckpointsAndRejectsMismatches) {
  const auto dir = test::temp_dir("average");
  auto a = test::fixture_model(1), b = test::fixture_model(2);
  TrainingState late;
  late.step = 200;
  save_checkpoint(dir / "a.pt", test::fixture_config(), a, test::fixture_tokenizer(), {});
  save_checkpoint(dir / "b.pt", test::fixture_config(), b, test::fixture_tokenizer(), late);
  const auto averaged = average_checkpoints({dir / "a.pt", dir / "b.pt"}, at::kCPU);
  const auto name = "encoder.embeddings.tokens.weight";
  EXPECT_TRUE(torch::allclose(averaged.model->named_parameters()[name],
                              (a->named_parameters()[name] + b->named_parameters()[name]) / 2));
  EXPECT_EQ(averaged.state.step, 200);

  auto other = test::fixture_config();
  other.model.d_ff = 128;
  auto wide = Seq2Seq(other.model);
  save_checkpoint(dir / "c.pt", other, wide, test::fixture_tokenizer(), {});
  test::expect_error(
      [&] {
        average_checkpoints({dir / "a.pt", dir / "c.pt"}, at::kCPU);
      },
      "c.pt: their model configs differ at model.d_ff: 64 vs 128");
  test::expect_error(
      [&] {
        average_checkpoints({dir / "a.pt", dir / "missing.pt"}, at::kCPU);
      },
      "missing.pt");
}

TEST(Average, RejectsCheckpointsWithDifferentTokenizers) {
  const auto dir = test::temp_dir("average_tokenizers");
  const std::filesystem::path fixtures = NMT_FIXTURES_DIR;
  DataConfig data = test::fixture_config().data;
  data.vocab_type = VocabType::kBpe;  // the same vocabulary size, other pieces
  const auto text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  const auto bpe = Tokenizer::train(data, text.src, text.tgt, dir / "spm");
  ASSERT_EQ(bpe.src_vocab_size(), test::fixture_tokenizer().src_vocab_size());
  auto model = test::fixture_model(1);
  save_checkpoint(dir / "a.pt", test::fixture_config(), model, test::fixture_tokenizer(), {});
  save_checkpoint(dir / "b.pt", test::fixture_config(), model, bpe, {});
  test::expect_error(
      [&] {
        average_checkpoints({dir / "a.pt", dir / "b.pt"}, at::kCPU);
      },
      "b.pt: their tokenizers differ");
}

}  // namespace
}  // namespace nmt

// cpu/packed_linear.h and model/quantize.h's pack_float32: float32 decoding with the weights
// packed once. Every kernel this CPU runs (AVX-512 and AVX2) gives LibTorch's x·Wᵀ + b to float
// rounding for any number of rows, inputs and outputs (tails of a tile and of a panel included),
// on one thread or several, and a packed model decodes as the plain one; validation during
// training packs only while it decodes; the NMT_PACKED_GEMM switch takes 0 or 1.
#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "cpu/int8_linear.h"
#include "cpu/packed_linear.h"
#include "decode/search.h"
#include "decode_test_util.h"
#include "model/linear.h"
#include "model/quantize.h"
#include "search_test_util.h"
#include "test_util.h"

namespace nmt {
namespace {

#define SKIP_WITHOUT_KERNEL() \
  if (cpu::gemm_isa() == cpu::GemmIsa::kNone) GTEST_SKIP() << "no AVX2 + FMA on this CPU"

/// Every ISA the kernel has that this CPU runs.
std::vector<cpu::GemmIsa> runnable_isas() {
  std::vector<cpu::GemmIsa> isas;
  for (auto isa : {cpu::GemmIsa::kAvx2, cpu::GemmIsa::kAvx512}) {
    if (isa <= cpu::gemm_isa()) isas.push_back(isa);
  }
  return isas;
}

TEST(PackedLinear, GivesLibTorchsProductForEveryShapeAndKernel) {
  SKIP_WITHOUT_KERNEL();
  torch::NoGradGuard no_grad;
  torch::manual_seed(3);
  // Rows below, at and past a tile (3 for AVX2, 12 for AVX-512) and a row block (96); outputs
  // whose last panel has 1, 7, 16, 20, 31 or 32 columns (both halves of the AVX-512 tile, each
  // quarter of the AVX2 one); inputs odd and even.
  for (int64_t rows : {1, 3, 5, 12, 13, 97, 200}) {
    for (int64_t out : {1, 7, 16, 20, 32, 33, 48, 63, 70}) {
      for (int64_t in : {1, 16, 37}) {
        const at::Tensor x = torch::randn({rows, in});
        const at::Tensor weight = torch::randn({out, in});
        const at::Tensor bias = torch::randn({out});
        for (auto isa : runnable_isas()) {
          for (bool with_bias : {true, false}) {
            const at::Tensor b = with_bias ? bias : at::Tensor();
            const cpu::PackedLinear layer(weight, b, isa);
            const at::Tensor got = layer.forward(x);
            const at::Tensor expected = at::linear(x, weight, b);
            ASSERT_EQ(got.sizes(), expected.sizes());
            EXPECT_TRUE(torch::allclose(got, expected, 1e-5, 1e-5))
                << cpu::gemm_isa_name(isa) << " rows " << rows << " in " << in << " out " << out
                << " bias " << with_bias << ": max error "
                << (got - expected).abs().max().item<double>();
          }
        }
      }
    }
  }
}

TEST(PackedLinear, TakesBatchesOfSequencesAndStridedInputs) {
  SKIP_WITHOUT_KERNEL();
  torch::NoGradGuard no_grad;
  torch::manual_seed(4);
  const at::Tensor weight = torch::randn({40, 24});
  const at::Tensor bias = torch::randn({40});
  const cpu::PackedLinear layer(weight, bias);
  const at::Tensor x = torch::randn({3, 5, 48}).narrow(2, 8, 24);  // not contiguous
  const at::Tensor got = layer.forward(x);
  EXPECT_EQ(got.sizes(), (std::vector<int64_t>{3, 5, 40}));
  EXPECT_TRUE(torch::allclose(got, at::linear(x, weight, bias), 1e-5, 1e-5));
  EXPECT_EQ(layer.in_features(), 24);
  EXPECT_EQ(layer.out_features(), 40);
  EXPECT_THROW(layer.forward(torch::randn({2, 23})), c10::Error);
  EXPECT_THROW(layer.forward(torch::randn({2, 24}, at::kDouble)), c10::Error);
}

// The panels are split over the intra-op threads; each output is computed alike whichever thread
// takes it, so 1 and 2 threads agree bit for bit.
TEST(PackedLinear, ThreadsDoNotChangeTheResult) {
  SKIP_WITHOUT_KERNEL();
  torch::NoGradGuard no_grad;
  torch::manual_seed(5);
  const at::Tensor weight = torch::randn({300, 64});
  const cpu::PackedLinear layer(weight, torch::randn({300}));
  const at::Tensor x = torch::randn({50, 64});
  const int previous = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = layer.forward(x);
  at::set_num_threads(2);
  const at::Tensor two = layer.forward(x);
  at::set_num_threads(previous);
  EXPECT_TRUE(torch::equal(one, two));
}

// Every linear layer, the tied output projection included, gets packed weights, and the packed
// model decodes as the plain one.
TEST(PackedLinear, APackedModelDecodesAsThePlainModel) {
  SKIP_WITHOUT_KERNEL();
  torch::NoGradGuard no_grad;
  Seq2Seq plain = test::fixture_model(7);
  Seq2Seq packed = test::fixture_model(7);
  const std::string what = pack_float32(packed);
  EXPECT_NE(what.find("float32 weights packed for the "), std::string::npos) << what;
  EXPECT_TRUE(bool(packed->decoder->tied_twin) || bool(packed->decoder->output->twin));
  const at::Tensor src = torch::randint(4, 60, {3, 9}, at::kLong);
  const at::Tensor tgt = torch::randint(4, 60, {3, 6}, at::kLong);
  const at::Tensor reference = plain->forward(src, tgt);
  const at::Tensor got = packed->forward(src, tgt);
  EXPECT_TRUE(torch::allclose(got, reference, 1e-4, 1e-4))
      << (got - reference).abs().max().item<double>();
}

// Greedy and beam search (whose first step decodes one row per sentence, then copies it to the
// beam) find the same outputs with the weights packed, on a part-trained model.
TEST(PackedLinear, SearchFindsTheSameOutputsPacked) {
  SKIP_WITHOUT_KERNEL();
  Seq2Seq model = test::trained_model();
  const auto src = test::random_sources({4, 8, 1, 6, 3}, 5);
  const auto greedy = greedy_search(model, src, test::decode_config());
  const auto beam = beam_search(model, src, test::decode_config(4, 2));
  const PackedWhileDecoding packed(model, true);  // the shared model gets its twins back after
  ASSERT_TRUE(packed.packed());
  const auto greedy_packed = greedy_search(model, src, test::decode_config());
  const auto beam_packed = beam_search(model, src, test::decode_config(4, 2));
  ASSERT_EQ(greedy_packed.size(), greedy.size());
  ASSERT_EQ(beam_packed.size(), beam.size());
  for (size_t row = 0; row < greedy.size(); ++row) {
    EXPECT_EQ(greedy_packed[row].tokens, greedy[row].tokens) << "row " << row;
    EXPECT_NEAR(greedy_packed[row].log_prob, greedy[row].log_prob, 1e-4) << "row " << row;
    ASSERT_EQ(beam_packed[row].size(), beam[row].size()) << "row " << row;
    for (size_t n = 0; n < beam[row].size(); ++n) {
      EXPECT_EQ(beam_packed[row][n].tokens, beam[row][n].tokens) << "row " << row << " n " << n;
      EXPECT_NEAR(beam_packed[row][n].score, beam[row][n].score, 1e-4) << "row " << row;
    }
  }
}

// A decoding model keeps only its twins' copies: release_twinned_weights empties the float
// weights of every twinned linear layer but the untied output projection (a shortlist reads its
// rows), and the model computes the same outputs, packed or int8, tied output or not.
TEST(PackedLinear, ReleasedFloatWeightsLeaveTheSameOutputs) {
  SKIP_WITHOUT_KERNEL();
  torch::NoGradGuard no_grad;
  const at::Tensor src = torch::randint(4, 60, {3, 9}, at::kLong);
  const at::Tensor tgt = torch::randint(4, 60, {3, 6}, at::kLong);
  for (const bool tied : {false, true}) {
    for (const bool int8 : {false, true}) {
      if (int8 && !cpu::int8_available()) continue;
      const std::string what = std::string(tied ? "tied" : "untied") + (int8 ? " int8" : " packed");
      auto config = test::fixture_model_config();
      config.tie_output = tied;
      torch::manual_seed(9);
      Seq2Seq model(config);
      model->eval();
      int8 ? quantize_int8(model) : pack_float32(model);
      const at::Tensor before = model->forward(src, tgt);
      const int64_t float_bytes = [&] {
        int64_t bytes = 0;
        for (const auto& p : model->parameters()) bytes += int64_t(p.nbytes());
        return bytes;
      }();
      const int64_t freed = release_twinned_weights(model);
      int64_t left = 0, emptied = 0;
      for (const auto& module : model->modules(/*include_self=*/false)) {
        auto linear = std::dynamic_pointer_cast<LinearImpl>(module);
        if (!linear) continue;
        const bool output = !tied && linear.get() == model->decoder->output.get();
        EXPECT_EQ(linear->weight.numel() == 0, !output) << what;
        emptied += linear->weight.numel() == 0;
      }
      for (const auto& p : model->parameters()) left += int64_t(p.nbytes());
      EXPECT_GT(emptied, 0) << what;
      EXPECT_GT(freed, 0) << what;
      EXPECT_EQ(left, float_bytes - freed) << what;
      EXPECT_TRUE(torch::equal(model->forward(src, tgt), before)) << what;
      EXPECT_EQ(release_twinned_weights(model), 0) << what;  // a second call finds nothing
    }
  }
}

// NMT_PACKED_GEMM takes 0 or 1; another value is one error naming it, before any decoding.
TEST(PackedLinear, TheSwitchTakesZeroOrOne) {
  const auto dir = test::temp_dir("packed_switch");
  const std::string args =
      "translate --device cpu --checkpoint " + test::save_fixture_checkpoint(dir).string();
  for (const char* value : {"0", "1"}) {
    ::setenv("NMT_PACKED_GEMM", value, 1);
    const auto run = test::run_nmt(args, "a dog .\n", dir);
    EXPECT_EQ(run.code, 0) << value << ": " << run.err;
    EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  }
  ::setenv("NMT_PACKED_GEMM", "off", 1);
  const auto bad = test::run_nmt(args, "a dog .\n", dir);
  ::unsetenv("NMT_PACKED_GEMM");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "error: NMT_PACKED_GEMM='off' is not valid: use 1 (float32 decoding with packed "
            "weights, the default) or 0 (LibTorch's linear layers)\n");
  EXPECT_EQ(bad.out, "");
}

// Validation during training packs the weights for its decoding only: the guard's twins are gone
// when it ends, and a model the guard was not wanted for, or not in float32, is left as it is.
TEST(PackedLinear, PackedWhileDecodingPacksForItsLifetimeOnly) {
  SKIP_WITHOUT_KERNEL();
  Seq2Seq model = test::fixture_model(8);
  const auto has_twins = [&] {
    return bool(model->decoder->tied_twin) || bool(model->decoder->output->twin);
  };
  {
    const PackedWhileDecoding packed(model, true);
    EXPECT_TRUE(packed.packed());
    EXPECT_TRUE(has_twins());
  }
  EXPECT_FALSE(has_twins());
  {
    const PackedWhileDecoding packed(model, false);
    EXPECT_FALSE(packed.packed());
    EXPECT_FALSE(has_twins());
  }
  model->to(at::kBFloat16);
  const PackedWhileDecoding bf16(model, true);
  EXPECT_FALSE(bf16.packed());
  EXPECT_FALSE(has_twins());
}

}  // namespace
}  // namespace nmt

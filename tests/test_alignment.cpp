// decode/alignment.h: word alignments (Pharaoh i-j) from cross-attention, and on a trained copy
// model the diagonal.
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "decode/alignment.h"
#include "decode/translator.h"
#include "decode_test_util.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "trainer_test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
const std::string kMark = "\xE2\x96\x81";  // ▁

TEST(Alignment, PiecesFormWordsAtEachSpaceMarkAndEosIsNone) {
  EXPECT_EQ(piece_words({kMark + "a", kMark + "do", "g", kMark + "runs", "</s>"}),
            (std::vector<int64_t>{0, 1, 1, 2, -1}));
  EXPECT_EQ(piece_words({"ab", "c", kMark + "d"}), (std::vector<int64_t>{0, 0, 1}));
}

// Each target word takes the source word its pieces attend to most, summed over the pieces of
// both; eos attention counts for no word.
TEST(Alignment, EachTargetWordTakesTheSourceWordWithTheMostAttention) {
  AttentionMap map;
  map.src_pieces = {kMark + "a", kMark + "do", "g", kMark + "runs", "</s>"};
  map.tgt_pieces = {kMark + "ein", kMark + "hu", "nd", kMark + "rennt", "</s>"};
  map.weights = torch::tensor({{0.7, 0.1, 0.1, 0.0, 0.1},  // ein: a
                               {0.1, 0.3, 0.3, 0.3, 0.0},  // hu: dog (0.6 over its 2 pieces)
                               {0.4, 0.0, 0.2, 0.4, 0.0},  // nd: with hu, dog 0.8 vs runs 0.7
                               {0.0, 0.0, 0.0, 0.3, 0.7},  // rennt: runs (eos is no word)
                               {0.0, 0.0, 0.0, 0.0, 1.0}},
                              at::kFloat);
  const auto pairs = align_words(map);
  EXPECT_EQ(pharaoh(pairs), "0-0 1-1 2-2");
  // Reordered: the second target word attends to the last source word.
  map.weights = torch::tensor({{0.9, 0.0, 0.0, 0.1, 0.0},
                               {0.0, 0.0, 0.0, 0.9, 0.1},
                               {0.0, 0.0, 0.0, 0.9, 0.1},
                               {0.0, 0.5, 0.5, 0.0, 0.0},
                               {0.0, 0.0, 0.0, 0.0, 1.0}},
                              at::kFloat);
  EXPECT_EQ(pharaoh(align_words(map)), "0-0 2-1 1-2");
}

// A model trained to copy its input: where its output is the input, the alignment is the
// diagonal (one attention head, as --head chooses one; the test measured 98% of the pairs).
TEST(Alignment, ACopyModelAlignsTheDiagonal) {
  const auto dir = test::temp_dir("align_copy");
  const fs::path data = dir / "data";
  fs::create_directories(data);
  const std::string fixtures = NMT_FIXTURES_DIR;
  for (const char* lang : {"en", "de"}) {  // both sides the same English text
    fs::copy_file(fixtures + "/tiny.en", data / (std::string("copy.") + lang));
    fs::copy_file(fixtures + "/tiny_val.en", data / (std::string("copyval.") + lang));
  }
  Config config = test::step_config(dir / "run", 1500);
  config.data.dir = data.string();
  config.data.train = {CorpusSpec::of_split("copy")};
  config.data.valid = {CorpusSpec::of_split("copyval")};
  config.model.d_model = 64;
  config.model.n_heads = 1;
  config.model.positions = Positions::kSinusoidal;
  config.train.lr = 5e-3;
  config.train.warmup.steps = 20;
  config.train.validate_every = 1500;
  config.train.log_every = 100;
  test::train(config);
  LoadedModel loaded = load_checkpoint(dir / "run" / "last.pt", at::kCPU);
  DecodeConfig greedy;
  greedy.beam = 1;
  Translator translator(loaded.model, loaded.tokenizer, greedy, at::kCPU);
  std::vector<std::string> lines;
  std::ifstream in(fixtures + "/tiny_val.en");
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const auto results = translator.translate(lines);
  int copies = 0, pairs = 0, diagonal = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (results[i].best() != lines[i]) continue;
    ++copies;
    for (const auto& [s, t] : align_words(
             attention_map(translator.teacher_forcing(), lines[i], results[i].nbest[0].tokens))) {
      ++pairs;
      diagonal += s == t ? 1 : 0;
    }
  }
  std::cout << "copy model: " << copies << " of " << lines.size() << " copied, " << diagonal
            << " of " << pairs << " word pairs on the diagonal\n";
  ASSERT_GE(copies, 20) << "the copy model copied " << copies << " of " << lines.size();
  EXPECT_GE(double(diagonal), 0.95 * pairs) << diagonal << " of " << pairs << " on the diagonal";
}

TEST(Alignment, TranslateFollowsEachTranslationWithItsPairs) {
  const auto dir = test::temp_dir("align_cli");
  const std::string base =
      "translate --device cpu --checkpoint " + test::save_fixture_checkpoint(dir).string();
  const auto run = test::run_nmt(base + " --alignment --max-len 5", "a dog .\n\ntwo men .\n", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const std::regex line("[^\t]*\t([0-9]+-[0-9]+( [0-9]+-[0-9]+)*)?");
  std::istringstream out(run.out);
  int count = 0;
  for (std::string text; std::getline(out, text); ++count) {
    EXPECT_TRUE(std::regex_match(text, line)) << text;
  }
  EXPECT_EQ(count, 3);
  const auto nbest =
      test::run_nmt(base + " --alignment --beam 2 --nbest 2 --max-len 5", "a dog .\n", dir);
  ASSERT_EQ(nbest.code, 0) << nbest.err;
  const std::regex scored(
      "-?[0-9.]+\t[^\t]*\t([0-9]+-[0-9]+( [0-9]+-[0-9]+)*)?\n"
      "-?[0-9.]+\t[^\t]*\t([0-9]+-[0-9]+( [0-9]+-[0-9]+)*)?\n");
  EXPECT_TRUE(std::regex_match(nbest.out, scored)) << nbest.out;
}

}  // namespace
}  // namespace nmt

// The lexical shortlist (decode/shortlist.h): what it learns, its file, the candidates of a batch,
// and decoding with it (only a sentence's own candidates come out, alone or in a batch; a
// shortlist of everything changes nothing).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "core/error.h"
#include "core/special_ids.h"
#include "cpu/int8_linear.h"
#include "decode/search.h"
#include "decode/shortlist.h"
#include "decode_test_util.h"
#include "model/quantize.h"
#include "search_test_util.h"
#include "test_util.h"

namespace nmt {
namespace {

/// The dictionary the synthetic pairs follow: source id x translates to (x * 7) % 20 + 4.
int64_t translation_of(int64_t x) { return (x * 7) % (test::kVocab - 4) + 4; }

/// Sentence pairs of 1-8 words over the tiny vocabulary; each target holds the source's words'
/// translations, shuffled (so position says nothing), and sometimes a random extra word.
void dictionary_pairs(std::vector<std::vector<int64_t>>& sources,
                      std::vector<std::vector<int64_t>>& targets, size_t count = 400) {
  std::mt19937 rng(3);
  for (size_t i = 0; i < count; ++i) {
    std::vector<int64_t> src, tgt;
    for (size_t k = 0, n = 1 + rng() % 8; k < n; ++k) {
      src.push_back(4 + int64_t(rng() % (test::kVocab - 4)));
      tgt.push_back(translation_of(src.back()));
    }
    if (rng() % 3 == 0) tgt.push_back(4 + int64_t(rng() % (test::kVocab - 4)));
    std::shuffle(tgt.begin(), tgt.end(), rng);
    sources.push_back(src);
    targets.push_back(tgt);
  }
}

Shortlist dictionary_shortlist(int64_t per_source, int64_t frequent) {
  std::vector<std::vector<int64_t>> sources, targets;
  dictionary_pairs(sources, targets);
  ShortlistOptions options;
  options.per_source = per_source;
  options.frequent = frequent;
  return Shortlist::learn(sources, targets, test::kVocab, test::kVocab, options);
}

/// A shortlist under which every target piece is a candidate of every source piece.
Shortlist everything_shortlist() {
  std::vector<std::vector<int64_t>> sources, targets;
  std::vector<int64_t> all;
  for (int64_t t = 4; t < test::kVocab; ++t) all.push_back(t);
  for (int64_t s = 4; s < test::kVocab; ++s) {
    sources.push_back({s});
    targets.push_back(all);
  }
  ShortlistOptions options;
  options.per_source = test::kVocab;
  options.frequent = 0;
  return Shortlist::learn(sources, targets, test::kVocab, test::kVocab, options);
}

std::vector<int64_t> to_vector(const at::Tensor& ids) {
  const auto contiguous = ids.to(at::kLong).contiguous();
  return {contiguous.data_ptr<int64_t>(), contiguous.data_ptr<int64_t>() + contiguous.numel()};
}

TEST(Shortlist, LearnsTheDictionaryOfAParallelText) {
  const auto shortlist = dictionary_shortlist(/*per_source=*/1, /*frequent=*/0);
  for (int64_t x = 4; x < test::kVocab; ++x) {
    ASSERT_EQ(shortlist.list(x).size(), 1u) << x;
    EXPECT_EQ(shortlist.list(x).front(), translation_of(x)) << "source " << x;
  }
  EXPECT_TRUE(shortlist.list(kPadId).empty());
  EXPECT_EQ(shortlist.always(), (std::vector<int64_t>{kUnkId, kEosId}));
}

TEST(Shortlist, KeepsTheMostFrequentTargetPieces) {
  std::vector<std::vector<int64_t>> sources = {{4}, {5}, {6}},
                                    targets = {{9, 9, 8}, {9, 7}, {9, 8}};
  ShortlistOptions options;
  options.frequent = 2;
  const auto shortlist = Shortlist::learn(sources, targets, 10, 10, options);
  EXPECT_EQ(shortlist.always(), (std::vector<int64_t>{kUnkId, kEosId, 8, 9}));
}

TEST(Shortlist, CandidatesAreTheBatchsListsTheFrequentPiecesAndTheForcedOnes) {
  const auto shortlist = dictionary_shortlist(/*per_source=*/2, /*frequent=*/0);
  const auto src = torch::tensor({5, 6, int(kEosId), 7, int(kEosId), int(kPadId)}).view({2, 3});
  std::set<int64_t> expected = {kUnkId, kEosId, 20};
  for (const int64_t x : {5, 6, 7})
    expected.insert(shortlist.list(x).begin(), shortlist.list(x).end());
  const auto candidates = to_vector(shortlist.candidates(src, {20}));
  EXPECT_EQ(candidates, std::vector<int64_t>(expected.begin(), expected.end()));
  EXPECT_TRUE(std::is_sorted(candidates.begin(), candidates.end()));
}

TEST(Shortlist, TheFileIsAVocabularyMapUnderAHeaderAndLoadsBack) {
  const auto dir = test::temp_dir("shortlist_file");
  const Tokenizer& tokenizer = test::fixture_tokenizer();
  const auto text = read_parallel(std::filesystem::path(NMT_FIXTURES_DIR) / "tiny.en",
                                  std::filesystem::path(NMT_FIXTURES_DIR) / "tiny.de");
  std::vector<std::vector<int64_t>> sources, targets;
  for (size_t i = 0; i < text.size(); ++i) {
    sources.push_back(tokenizer.encode_src(text.src[i]));
    targets.push_back(tokenizer.encode_tgt(text.tgt[i]));
  }
  ShortlistOptions options;
  options.per_source = 5;
  options.frequent = 10;
  const auto learned = Shortlist::learn(sources, targets, tokenizer.src_vocab_size(),
                                        tokenizer.tgt_vocab_size(), options);
  learned.save(dir / "s.txt", tokenizer);
  std::ostringstream vmap;
  learned.write_vmap(vmap, tokenizer);
  const std::string file = test::read_text(dir / "s.txt");
  const auto first_line = file.substr(0, file.find('\n') + 1);
  EXPECT_EQ(first_line, "# nmt shortlist: vocabulary " + tokenizer.fingerprint() +
                            ", 150 source and 150 target pieces, 5 per source, 10 frequent\n");
  EXPECT_EQ(file.substr(first_line.size()), vmap.str());  // CTranslate2's vmap.txt below it
  EXPECT_EQ(vmap.str().front(), '\t');                    // the pieces always kept come first

  const auto loaded = Shortlist::load(dir / "s.txt", tokenizer);
  EXPECT_EQ(loaded.always(), learned.always());
  for (int64_t s = 0; s < tokenizer.src_vocab_size(); ++s) {
    EXPECT_EQ(loaded.list(s), learned.list(s)) << tokenizer.src_piece(s);
  }
  EXPECT_EQ(loaded.describe(), learned.describe());
}

TEST(Shortlist, AFileForAnotherVocabularyOrWithUnknownPiecesIsRefusedByName) {
  const auto dir = test::temp_dir("shortlist_refused");
  const Tokenizer& tokenizer = test::fixture_tokenizer();
  const std::string header = "# nmt shortlist: vocabulary " + tokenizer.fingerprint() +
                             ", 150 source and 150 target pieces, 5 per source, 10 frequent\n";
  const auto error_of = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    try {
      Shortlist::load(dir / name, tokenizer);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto other = error_of("other.txt", "# nmt shortlist: vocabulary 00000000deadbeef, 1\n");
  EXPECT_NE(other.find("other.txt: a shortlist for another vocabulary (tokenizer "
                       "00000000deadbeef, the model's is " +
                       tokenizer.fingerprint()),
            std::string::npos)
      << other;
  EXPECT_NE(error_of("plain.txt", "\t</s>\n").find("plain.txt line 1: not an nmt shortlist"),
            std::string::npos);
  EXPECT_NE(error_of("src.txt", header + "\t</s>\nnot-a-piece\t</s>\n")
                .find("src.txt line 3: 'not-a-piece' is not a piece of the model's source"),
            std::string::npos);
  EXPECT_NE(error_of("tgt.txt", header + "\tnot-a-piece\n")
                .find("tgt.txt line 2: 'not-a-piece' is not a piece of the model's target"),
            std::string::npos);
  EXPECT_NE(error_of("tab.txt", header + "no tab here\n").find("tab.txt line 2: expected"),
            std::string::npos);
}

TEST(Shortlist, AShortlistOfEverythingDecodesAsTheWholeVocabulary) {
  const auto model = test::random_model(4, /*eos_bias=*/3.0);
  const auto src = test::random_sources({5, 3, 8, 1}, 4);
  DecodeConfig config;
  config.beam = 3;
  config.nbest = 3;
  Ensemble plain(model), listed(model);
  listed.set_shortlist(std::make_shared<const Shortlist>(everything_shortlist()));
  const auto greedy = greedy_search(plain, src, config);
  const auto greedy_listed = greedy_search(listed, src, config);
  const auto beam = beam_search(plain, src, config);
  const auto beam_listed = beam_search(listed, src, config);
  for (size_t row = 0; row < greedy.size(); ++row) {
    EXPECT_EQ(greedy_listed[row].tokens, greedy[row].tokens) << row;
    EXPECT_NEAR(greedy_listed[row].log_prob, greedy[row].log_prob, 1e-4) << row;
    for (size_t k = 0; k < beam[row].size(); ++k) {
      EXPECT_EQ(beam_listed[row][k].tokens, beam[row][k].tokens) << row << " " << k;
    }
  }
}

/// Every output token of `hypotheses` is among `candidates`, and at least one output differs
/// from the unrestricted search's (the shortlist did restrict it).
void expect_only_candidates(const std::vector<Hypothesis>& hypotheses,
                            const std::vector<int64_t>& candidates) {
  for (const auto& hypothesis : hypotheses) {
    for (const int64_t token : hypothesis.tokens) {
      EXPECT_TRUE(std::binary_search(candidates.begin(), candidates.end(), token)) << token;
    }
  }
}

TEST(Shortlist, DecodingProducesOnlyTheBatchsCandidates) {
  auto model = test::random_model(5);  // repeats tokens whatever the source: shortlists bite
  const auto shortlist = std::make_shared<const Shortlist>(dictionary_shortlist(1, 0));
  const auto src = test::random_sources({4, 6, 2}, 9);
  const auto candidates = to_vector(shortlist->candidates(src));
  ASSERT_LT(candidates.size(), size_t(test::kVocab - 4));
  Ensemble plain(model), listed(model);
  listed.set_shortlist(shortlist);
  DecodeConfig config;
  const auto free = greedy_search(plain, src, config);
  const auto restricted = greedy_search(listed, src, config);
  expect_only_candidates(restricted, candidates);
  bool differs = false;
  for (size_t row = 0; row < free.size(); ++row)
    differs |= free[row].tokens != restricted[row].tokens;
  EXPECT_TRUE(differs) << "the random model's own outputs were candidates already";
  // A forced prefix outside the lists is kept a candidate, and decoding follows it.
  const int64_t outside = [&] {
    for (int64_t t = 4; t < test::kVocab; ++t) {
      if (!std::binary_search(candidates.begin(), candidates.end(), t)) return t;
    }
    return int64_t(-1);
  }();
  ASSERT_GE(outside, 0);
  std::vector<OutputGuide> guides(3);
  guides[1].prefix = {outside};
  const auto guided = greedy_search(listed, src, config, guides);
  ASSERT_FALSE(guided[1].tokens.empty());
  EXPECT_EQ(guided[1].tokens.front(), outside);
  EXPECT_TRUE(std::isfinite(guided[1].log_prob));
}

// Each sentence scores only its own candidates, whatever else is in its batch: a batch's union
// would let one sentence's words into another's output, so a line would translate differently
// in a file than alone (CTranslate2's vmap at batch size 1 sees the same candidates).
TEST(Shortlist, ASentenceDecodesAloneAsInABatch) {
  auto model = test::random_model(5);  // repeats tokens whatever the source: shortlists bite
  Ensemble listed(model);
  const auto shortlist = std::make_shared<const Shortlist>(dictionary_shortlist(1, 0));
  listed.set_shortlist(shortlist);
  const auto src = test::random_sources({4, 6, 2, 5}, 9);
  DecodeConfig config;
  config.beam = 3;
  const auto greedy = greedy_search(listed, src, config);
  const auto beam = beam_search(listed, src, config);
  for (int64_t row = 0; row < src.size(0); ++row) {
    const int64_t length = src[row].ne(kPadId).sum().item<int64_t>();
    const auto alone = src.slice(0, row, row + 1).slice(1, 0, length);
    const auto own = to_vector(shortlist->candidates(alone));
    expect_only_candidates({greedy[size_t(row)]}, own);
    EXPECT_EQ(greedy_search(listed, alone, config).front().tokens, greedy[size_t(row)].tokens)
        << row;
    const auto beam_alone = beam_search(listed, alone, config).front();
    for (size_t k = 0; k < beam_alone.size(); ++k) {
      EXPECT_EQ(beam_alone[k].tokens, beam[size_t(row)][k].tokens) << row << " " << k;
    }
  }
}

// A prefix forces its tokens into its own sentence's candidates, not into the others': row 1's
// prefix is a token row 0 would produce without a shortlist, and rows 0 and 2 decode as alone.
TEST(Shortlist, AnotherSentencesPrefixIsNoCandidate) {
  auto model = test::random_model(5);
  Ensemble plain(model), listed(model);
  const auto shortlist = std::make_shared<const Shortlist>(dictionary_shortlist(1, 0));
  listed.set_shortlist(shortlist);
  const auto src = test::random_sources({4, 6, 2}, 9);
  DecodeConfig config;
  const auto candidates = to_vector(shortlist->candidates(src));
  int64_t wanted = -1;  // row 0's favourite token outside every list
  const auto free = greedy_search(plain, src, config);
  for (const int64_t t : free[0].tokens) {
    if (!std::binary_search(candidates.begin(), candidates.end(), t)) wanted = t;
  }
  ASSERT_GE(wanted, 0) << "row 0 keeps to the lists even without them";
  std::vector<OutputGuide> guides(3);
  guides[1].prefix = {wanted};
  const auto guided = greedy_search(listed, src, config, guides);
  ASSERT_FALSE(guided[1].tokens.empty());
  EXPECT_EQ(guided[1].tokens.front(), wanted);
  for (const int64_t row : {0, 2}) {
    const int64_t length = src[row].ne(kPadId).sum().item<int64_t>();
    const auto alone = src.slice(0, row, row + 1).slice(1, 0, length);
    EXPECT_EQ(greedy_search(listed, alone, config).front().tokens, guided[size_t(row)].tokens)
        << row;
  }
}

TEST(Shortlist, OutputRowsScoreAsTheWholeProjectionDoesInEveryLayout) {
  auto model = test::random_model(7);
  const auto ids = torch::tensor({int64_t(kEosId), int64_t(5), int64_t(11), int64_t(23)});
  const auto hidden = torch::randn({6, model->config().d_model});
  torch::NoGradGuard no_grad;
  const auto check = [&](const std::string& layout) {
    const auto rows = model->decoder->output_rows(ids);
    const auto whole = model->decoder->project(hidden).index_select(1, ids);
    const auto part = model->decoder->project(hidden, rows);
    EXPECT_TRUE(torch::allclose(part, whole, 1e-5, 1e-5)) << layout;
  };
  check("float");
  if (packing_available()) {
    pack_float32(model);
    check("packed float32");
    remove_twins(model);
  }
  if (cpu::int8_available()) {
    quantize_int8(model);
    ASSERT_TRUE(model->decoder->output_rows(ids).twin) << "int8 rows keep an int8 layer";
    check("int8");
    remove_twins(model);
  }
}

TEST(Shortlist, AShortlistForAnotherVocabularySizeIsRefused) {
  Ensemble models(test::random_model(1));
  std::vector<std::vector<int64_t>> sources = {{4}}, targets = {{5}};
  const auto other = Shortlist::learn(sources, targets, 10, 10, ShortlistOptions{});
  EXPECT_THROW(models.set_shortlist(std::make_shared<const Shortlist>(other)), Error);
}

TEST(Shortlist, LearnedTranslatedWithAndExportedFromTheCommandLine) {
  const auto dir = test::temp_dir("shortlist_cli");
  const auto checkpoint = test::save_fixture_checkpoint(dir);
  const std::string fixtures = NMT_FIXTURES_DIR;
  const auto learned = test::run_nmt(
      "shortlist --checkpoint " + checkpoint.string() + " --src " + fixtures + "/tiny.en --tgt " +
          fixtures + "/tiny.de --per-source 3 --output " + (dir / "s.txt").string(),
      "", dir);
  ASSERT_EQ(learned.code, 0) << learned.err;
  EXPECT_NE(learned.err.find("3 per source piece, 100 frequent"), std::string::npos) << learned.err;
  const auto translated = test::run_nmt(
      "translate --checkpoint " + checkpoint.string() + " --shortlist " + (dir / "s.txt").string(),
      "A dog runs.\n", dir);
  EXPECT_EQ(translated.code, 0) << translated.err;
  const auto exported =
      test::run_nmt("export --checkpoint " + checkpoint.string() + " --output " +
                        (dir / "ct2").string() + " --shortlist " + (dir / "s.txt").string(),
                    "", dir);
  ASSERT_EQ(exported.code, 0) << exported.err;
  const auto file = test::read_text(dir / "s.txt");
  EXPECT_EQ(test::read_text(dir / "ct2" / "vmap.txt"), file.substr(file.find('\n') + 1));
}

}  // namespace
}  // namespace nmt

// Ensembles (decode/ensemble.h), target prefixes and lexically constrained beam search with
// dynamic beam allocation (decode/constrained_search.cpp), on tiny models: each test checks the
// property that defines the feature, against an independent reference where one exists.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/special_ids.h"
#include "decode/ensemble.h"
#include "decode/evaluation.h"
#include "decode/search.h"
#include "decode/search_internal.h"
#include "decode/translator.h"
#include "search_test_util.h"

namespace nmt {
namespace {

using namespace test;  // NOLINT: the search fixtures (search_test_util.h)

const std::vector<int64_t> kLengths = {3, 7, 5, 1, 8, 4};

/// Whether `phrase` occurs in `tokens` as a contiguous run.
bool contains(const std::vector<int64_t>& tokens, const std::vector<int64_t>& phrase) {
  return std::search(tokens.begin(), tokens.end(), phrase.begin(), phrase.end()) != tokens.end();
}

bool starts_with(const std::vector<int64_t>& tokens, const std::vector<int64_t>& prefix) {
  return tokens.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

/// The teacher-forced log-probability (eos included when `eos`) of `tokens` for source row
/// `row` of `src`, as an ensemble decodes: each step's log-probs averaged over the members.
double forced_log_prob(const Ensemble& models, const at::Tensor& src, int64_t row,
                       const std::vector<int64_t>& tokens, bool eos) {
  const int64_t length = src[row].ne(kPadId).sum().item<int64_t>();
  const auto sentence = src.slice(0, row, row + 1).slice(1, 0, length);
  std::vector<int64_t> prefix = {kBosId};
  double total = 0.0;
  auto targets = tokens;
  if (eos) targets.push_back(kEosId);
  for (const int64_t token : targets) {
    double mean = 0.0;
    for (size_t m = 0; m < models.size(); ++m) {
      auto member = models.member(m);
      mean += reference_next(member, sentence, prefix)[token].item<double>();
    }
    total += mean / static_cast<double>(models.size());
    prefix.push_back(token);
  }
  return total;
}

TEST(Ensemble, OfOneModelWithItselfGivesExactlyThatModelsOutput) {
  const auto model = trained_model();
  const Ensemble twice(std::vector<Seq2Seq>{model, model});
  const auto src = random_sources(kLengths, 3);
  const auto greedy = greedy_search(model, src, decode_config());
  const auto greedy_twice = greedy_search(twice, src, decode_config());
  const auto beam = beam_search(model, src, decode_config(4, 3));
  const auto beam_twice = beam_search(twice, src, decode_config(4, 3));
  for (size_t row = 0; row < kLengths.size(); ++row) {
    EXPECT_EQ(greedy_twice[row].tokens, greedy[row].tokens) << row;
    EXPECT_EQ(greedy_twice[row].log_prob, greedy[row].log_prob) << row;
    ASSERT_EQ(beam_twice[row].size(), beam[row].size()) << row;
    for (size_t k = 0; k < beam[row].size(); ++k) {
      EXPECT_EQ(beam_twice[row][k].tokens, beam[row][k].tokens) << row << " " << k;
      EXPECT_EQ(beam_twice[row][k].score, beam[row][k].score) << row << " " << k;
    }
  }
}

// Two different members: every step averages their log-probabilities, so the score beam search
// reports equals the mean of the members' teacher-forced log-probabilities of its output.
TEST(Ensemble, AveragesTheMembersLogProbabilitiesAtEveryStep) {
  const Ensemble pair(std::vector<Seq2Seq>{trained_model(), random_model(5)});
  const auto src = random_sources(kLengths, 4);
  const auto greedy = greedy_search(pair, src, decode_config());
  const auto beam = beam_search(pair, src, decode_config(3, 2));
  bool differs_from_first = false;
  const auto alone = greedy_search(trained_model(), src, decode_config());
  for (size_t row = 0; row < kLengths.size(); ++row) {
    const auto r = static_cast<int64_t>(row);
    const bool eos = static_cast<int64_t>(greedy[row].tokens.size()) <
                     max_output_length(pair, kLengths[row], decode_config());
    EXPECT_NEAR(greedy[row].log_prob, forced_log_prob(pair, src, r, greedy[row].tokens, eos), 1e-4)
        << row;
    for (const auto& h : beam[row]) {
      const bool ended = static_cast<int64_t>(h.tokens.size()) <
                         max_output_length(pair, kLengths[row], decode_config());
      EXPECT_NEAR(h.log_prob, forced_log_prob(pair, src, r, h.tokens, ended), 1e-4) << row;
    }
    differs_from_first = differs_from_first || greedy[row].tokens != alone[row].tokens;
  }
  EXPECT_TRUE(differs_from_first) << "the second member changed nothing: the test shows nothing";
  // nmt score of an ensemble: the mean of the members' token log-probabilities.
  std::vector<Example> examples;
  for (size_t row = 0; row < kLengths.size(); ++row) {
    const auto ids = source_ids(src, kLengths)[row];
    examples.push_back({ids, greedy[row].tokens});
  }
  const auto both = teacher_forced_scores(pair, examples, 4096, at::kCPU);
  const auto first = teacher_forced_scores(trained_model(), examples, 4096, at::kCPU);
  const auto second = teacher_forced_scores(random_model(5), examples, 4096, at::kCPU);
  for (size_t i = 0; i < examples.size(); ++i) {
    EXPECT_NEAR(both[i].log_prob, (first[i].log_prob + second[i].log_prob) / 2, 1e-4) << i;
  }
}

TEST(Ensemble, MembersOfDifferentShapesAreOneErrorNamingThem) {
  const auto other = seeded_model(small_model_config(kVocab, kVocab + 8), 1);
  try {
    const Ensemble ensemble(std::vector<Seq2Seq>{trained_model(), other});
    FAIL() << "no error for " << ensemble.size() << " members";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("members 1 and 2 have different shapes"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("24/32"), std::string::npos) << e.what();
  }
}

// A forced prefix: the output starts with it, its log-prob counts the prefix's own tokens, and
// forcing the tokens the model would have chosen anyway changes nothing.
TEST(Prefix, EverySearchStartsWithThePrefixAndScoresIt) {
  const auto model = trained_model();
  const auto src = random_sources(kLengths, 6);
  const auto free = greedy_search(model, src, decode_config());
  std::vector<OutputGuide> forced(kLengths.size()), own(kLengths.size());
  for (size_t row = 0; row < kLengths.size(); ++row) {
    forced[row].prefix = {5, 9, 5};  // unlikely under the model
    own[row].prefix.assign(free[row].tokens.begin(),
                           free[row].tokens.begin() + std::min<size_t>(2, free[row].tokens.size()));
  }
  const auto same = greedy_search(model, src, decode_config(), own);
  const auto greedy = greedy_search(model, src, decode_config(), forced);
  const auto beam = beam_search(model, src, decode_config(4, 2), forced);
  auto sampling = decode_config();
  sampling.search = SearchKind::kSample;
  sampling.sample = 3;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(7);
  const auto samples = sample_search(model, src, sampling, generator, forced);
  for (size_t row = 0; row < kLengths.size(); ++row) {
    const auto r = static_cast<int64_t>(row);
    EXPECT_EQ(same[row].tokens, free[row].tokens) << row;
    EXPECT_TRUE(starts_with(greedy[row].tokens, forced[row].prefix)) << row;
    const bool eos = static_cast<int64_t>(greedy[row].tokens.size()) <
                     max_output_length(model, kLengths[row], decode_config());
    EXPECT_NEAR(greedy[row].log_prob, forced_log_prob(model, src, r, greedy[row].tokens, eos), 1e-4)
        << row;
    for (const auto& h : beam[row]) EXPECT_TRUE(starts_with(h.tokens, forced[row].prefix)) << row;
    for (const auto& h : samples[row]) EXPECT_TRUE(starts_with(h.tokens, forced[row].prefix));
  }
}

// Random one- and two-token constraints on every sentence: every output holds every phrase, and
// its log-prob is the model's own for those tokens (the search forces nothing but the choice).
TEST(Constraints, EveryOutputHoldsEveryConstraint) {
  const auto model = trained_model();
  const auto src = random_sources(kLengths, 8);
  std::mt19937 rng(8);
  std::vector<OutputGuide> guides(kLengths.size());
  for (auto& guide : guides) {
    const auto token = [&] { return 4 + static_cast<int64_t>(rng() % (kVocab - 4)); };
    guide.constraints = {{token()}, {token(), token()}};
  }
  for (const int64_t beam : {1, 3, 6}) {
    const auto results = beam_search(model, src, decode_config(beam, 1), guides);
    for (size_t row = 0; row < kLengths.size(); ++row) {
      const auto& best = results[row].front();
      EXPECT_EQ(best.unmet_constraints, 0) << beam << " " << row;
      for (const auto& phrase : guides[row].constraints) {
        EXPECT_TRUE(contains(best.tokens, phrase)) << "beam " << beam << " row " << row;
      }
      const bool eos = static_cast<int64_t>(best.tokens.size()) <
                       max_output_length(model, kLengths[row], decode_config());
      EXPECT_NEAR(best.log_prob,
                  forced_log_prob(model, src, static_cast<int64_t>(row), best.tokens, eos), 1e-4);
    }
  }
}

// A line without constraints translates as it would alone, whatever its batch neighbours ask:
// constrained sources are batched apart (the banks would otherwise search it too).
TEST(Constraints, ALineWithoutConstraintsIsNotChangedByItsNeighbours) {
  const auto model = trained_model();
  const auto src = random_sources(kLengths, 13);
  const auto sources = source_ids(src, kLengths);
  std::vector<OutputGuide> guides(sources.size());
  for (size_t i = 0; i < sources.size(); i += 2) guides[i].constraints = {{11}, {12, 13}};
  for (const int64_t beam : {1, 4}) {
    const auto config = decode_config(beam, 1);
    const auto alone = decode_all(model, sources, config, at::kCPU);
    const auto mixed = decode_all(model, sources, config, at::kCPU, nullptr, 1, guides);
    for (size_t i = 1; i < sources.size(); i += 2) {
      EXPECT_EQ(mixed[i].front().tokens, alone[i].front().tokens) << beam << " " << i;
      // (Other batch sizes: float sums may differ in the last bits.)
      EXPECT_NEAR(mixed[i].front().score, alone[i].front().score, 1e-4) << beam << " " << i;
    }
    for (size_t i = 0; i < sources.size(); i += 2) {
      EXPECT_TRUE(contains(mixed[i].front().tokens, {12, 13})) << beam << " " << i;
    }
  }
}

// A constraint the model would produce anyway costs nothing: the constrained search finds the
// unconstrained output again, or one that also holds the phrase and scores better.
TEST(Constraints, ConstraintsTheModelWouldMeetAnywayCostNothing) {
  const auto model = trained_model();
  const auto src = random_sources(kLengths, 9);
  const auto free = beam_search(model, src, decode_config(5, 1));
  std::vector<OutputGuide> guides(kLengths.size());
  for (size_t row = 0; row < kLengths.size(); ++row) {
    const auto& tokens = free[row].front().tokens;
    if (tokens.size() >= 2) guides[row].constraints = {{tokens[tokens.size() / 2]}};
  }
  bool any = false;
  int changed = 0;
  const auto constrained = beam_search(model, src, decode_config(5, 1), guides);
  for (size_t row = 0; row < kLengths.size(); ++row) {
    if (guides[row].constraints.empty()) continue;
    any = true;
    // The banks search more candidates than a plain beam, so they may find a better output
    // that also holds the phrase; never a worse one here.
    // (The plain beam sums its log-probs in float32, the banks in float64: 1e-5.)
    EXPECT_GE(constrained[row].front().score, free[row].front().score - 1e-5) << row;
    if (constrained[row].front().tokens != free[row].front().tokens) ++changed;
  }
  EXPECT_TRUE(any);
  EXPECT_LT(changed, 3) << "most outputs should be the unconstrained ones";
}

// Post & Vilar's point: a plain beam cannot hold a phrase the model finds unlikely long enough
// to finish it, the banks can. The phrase is three tokens.
TEST(Constraints, ALongUnlikelyPhraseIsCompletedByTheBanks) {
  const auto model = trained_model();
  const auto src = random_sources(kLengths, 10);
  std::vector<OutputGuide> guides(kLengths.size());
  for (auto& guide : guides) guide.constraints = {{6, 13, 6}};
  const auto results = beam_search(model, src, decode_config(4, 2), guides);
  for (size_t row = 0; row < kLengths.size(); ++row) {
    for (const auto& h : results[row]) EXPECT_TRUE(contains(h.tokens, {6, 13, 6})) << row;
  }
}

TEST(Constraints, WithAPrefixBothHold) {
  const auto model = trained_model();
  const auto src = random_sources(kLengths, 11);
  std::vector<OutputGuide> guides(kLengths.size());
  for (auto& guide : guides) guide.prefix = {7, 8}, guide.constraints = {{12}};
  const auto results = beam_search(model, src, decode_config(4, 1), guides);
  for (size_t row = 0; row < kLengths.size(); ++row) {
    EXPECT_TRUE(starts_with(results[row].front().tokens, {7, 8})) << row;
    EXPECT_TRUE(contains(results[row].front().tokens, {12})) << row;
  }
}

// When the limit leaves no room (a prefix takes it), the best cut output comes back and says
// how many constraints it lacks; the translator turns that into a warning for the line.
TEST(Constraints, NoRoomLeftIsReportedNotHidden) {
  const auto model = trained_model();
  const auto src = random_sources({2}, 12);
  std::vector<OutputGuide> guides(1);
  const int64_t limit = max_output_length(model, 2, decode_config(4, 1, 3));  // 5 tokens
  guides[0].prefix = std::vector<int64_t>(static_cast<size_t>(limit), 9);
  guides[0].constraints = {{10}};
  const auto results = beam_search(model, src, decode_config(4, 1, 3), guides);
  ASSERT_FALSE(results[0].empty());
  EXPECT_EQ(results[0].front().unmet_constraints, 1);
  EXPECT_EQ(results[0].front().tokens, guides[0].prefix);
}

TEST(Constraints, GuidesThatCannotFitAreOneErrorNamingTheSource) {
  const auto config = decode_config(4, 1, 2);
  const auto expect_error = [&](const OutputGuide& guide, const std::string& needle) {
    try {
      check_guide(guide, 4, config, "line 7");
      FAIL() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("line 7"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  OutputGuide empty_phrase;
  empty_phrase.constraints = {{5}, {}};
  expect_error(empty_phrase, "constraint 2 is empty");
  OutputGuide too_many;
  too_many.constraints = {{5, 6, 7}, {8, 9}};
  expect_error(too_many, "5 target pieces together, more than this output may have (4");
  OutputGuide long_prefix;
  long_prefix.prefix = {5, 6, 7, 8, 9};
  expect_error(long_prefix, "the prefix has 5 target pieces");
  auto sampling = config;
  sampling.search = SearchKind::kSample;
  sampling.sample = 2;
  sampling.beam = 1;
  OutputGuide one;
  one.constraints = {{5}};
  test::expect_error(
      [&] { check_guide(one, 4, sampling, "line 1"); },
      "line 1: constraints need beam search; decode.search = sample cannot keep them");
  sampling.search = SearchKind::kNucleus;  // every strategy that says it cannot keep them
  test::expect_error([&] { check_guide(one, 4, sampling, "line 1"); }, "nucleus cannot keep them");
  EXPECT_NO_THROW(check_guide(one, 4, config, "line 1"));
}

// Text in: the prefix and constraints go through the target tokenizer; what it cannot encode
// is one error naming the line, the text and the characters.
TEST(Constraints, TheTranslatorKeepsTextConstraintsAndRefusesWhatItCannotEncode) {
  const auto& tokenizer = fixture_tokenizer();
  const auto model = fixture_model(3);
  DecodeConfig config = decode_config(4, 1);
  Translator translator(model, tokenizer, config, at::kCPU);
  translator.set_log(nullptr);
  const std::vector<std::string> lines = {"a dog runs .", "two men ."};
  std::vector<OutputGuide> guides = {encode_guide(tokenizer, "", {"hund"}, "line 1"),
                                     encode_guide(tokenizer, "ein", {}, "line 2")};
  const auto results = translator.translate(lines, 1, guides);
  ASSERT_TRUE(results[0].ok() && results[1].ok());
  EXPECT_NE(results[0].best().find("hund"), std::string::npos) << results[0].best();
  EXPECT_EQ(results[1].best().rfind("ein", 0), 0u) << results[1].best();
  try {
    encode_guide(tokenizer, "", {"hund", "日本"}, "line 4");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("line 4: the constraint 2 \"日本\" cannot be encoded"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("'日'"), std::string::npos) << message;
  }
  EXPECT_THROW(encode_guide(tokenizer, "", {" "}, "line 5"), Error);
  EXPECT_THROW(encode_guide(tokenizer, std::string("\xff"), {}, "line 6"), Error);
}

}  // namespace
}  // namespace nmt

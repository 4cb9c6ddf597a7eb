// nmt's BLEU (every tokenizer sacreBLEU can run here), chrF, chrF++ and TER against goldens that
// sacreBLEU 2.6.0 itself produced on the multi-script text in tests/fixtures/metrics/ (German,
// French, Czech, Chinese, Japanese; one empty hypothesis, entities, symbols, CJK punctuation):
//   SACREBLEU_SRC=<sacrebleu v2.6.0 checkout> scripts/dev/metric_goldens.py > goldens.json
// (into tests/fixtures/metrics/; Debian 12's python3-regex, Unicode 15.0, as ICU 72 here).
// ja-mecab is checked apart (Tokenizers.JaMecab*): sacreBLEU's needs pip's MeCab and ipadic.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/corpus.h"
#include "eval/metrics.h"
#include "eval/signature.h"
#include "eval/unicode.h"

namespace nmt {
namespace {

const std::string kMetricFixtures = std::string(NMT_FIXTURES_DIR) + "/metrics/";

nlohmann::json metric_goldens() {
  std::ifstream in(kMetricFixtures + "goldens.json");
  return nlohmann::json::parse(in);
}

/// sacreBLEU's signature with nmt's version field in place of sacreBLEU's.
std::string with_nmt_version(std::string signature, const std::string& sacrebleu_version) {
  const std::string field = "version:" + sacrebleu_version;
  signature.replace(signature.find(field), field.size(), "version:" + metric_signature_version());
  return signature;
}

TEST(MetricGoldens, EveryScoreMatchesSacrebleu) {
  const nlohmann::json goldens = metric_goldens();
  const std::string version = goldens.at("sacrebleu_version");
  ASSERT_EQ(goldens.at("goldens").size(), 75u);  // 5 languages x (10 BLEU + 4 chrF + 1 TER)
  for (const auto& golden : goldens.at("goldens")) {
    const std::string lang = golden.at("lang");
    const auto hyps = read_lines(kMetricFixtures + lang + ".hyp");
    const auto refs = read_lines(kMetricFixtures + lang + ".ref");
    const std::string metric = golden.at("metric");
    double score = 0.0;
    std::string signature;
    std::string what = lang + " " + metric;
    if (metric == "bleu") {
      const std::string tokenize = golden.at("tokenize");
      const bool lowercase = golden.at("lowercase");
      what += " tok:" + tokenize + (lowercase ? " lc" : "");
      const BleuScore bleu =
          corpus_bleu(hyps, refs, lowercase, *parse_choice<BleuTokenizer>(tokenize));
      score = bleu.score;
      signature = bleu.signature;
    } else if (metric == "chrf") {
      const int word_order = golden.at("word_order");
      const bool lowercase = golden.at("lowercase");
      what += " nw:" + std::to_string(word_order) + (lowercase ? " lc" : "");
      const ChrfScore chrf = corpus_chrf(hyps, refs, lowercase, word_order);
      score = chrf.score;
      signature = chrf.signature;
    } else {
      const TerScore ter = corpus_ter(hyps, refs);
      score = ter.score;
      signature = ter.signature;
    }
    // The same arithmetic on the same counts: far closer than the 0.01 that matters.
    EXPECT_NEAR(score, golden.at("score").get<double>(), 1e-9) << what;
    EXPECT_EQ(signature, with_nmt_version(golden.at("signature"), version)) << what;
  }
}

TEST(MetricGoldens, TerEditsMatchSacrebleuSegmentBySegment) {
  // Shift-heavy segments up to 150 words (ter_shifts.*): ties between equal shifts, the band of
  // the edit distance, and the 1000-candidate budget all decide some of these counts.
  const nlohmann::json goldens = metric_goldens().at("ter_segments");
  const auto hyps = read_lines(kMetricFixtures + "ter_shifts.hyp");
  const auto refs = read_lines(kMetricFixtures + "ter_shifts.ref");
  ASSERT_EQ(hyps.size(), goldens.size());
  for (size_t i = 0; i < hyps.size(); ++i) {
    const auto ref = split_unicode_whitespace(refs[i]);
    EXPECT_EQ(translation_edits(split_unicode_whitespace(hyps[i]), ref),
              goldens[i][0].get<long long>())
        << "segment " << i + 1 << " (" << ref.size() << " reference words)";
    EXPECT_EQ(static_cast<long long>(ref.size()), goldens[i][1].get<long long>());
  }
}

TEST(MetricGoldens, ScoreHypothesesPicksTheTokenizerByTargetLanguage) {
  const auto hyps = read_lines(kMetricFixtures + "zh.hyp");
  const auto refs = read_lines(kMetricFixtures + "zh.ref");
  ScoringOptions options;
  options.target_language = "zh";
  EXPECT_NE(score_hypotheses(hyps, refs, options).bleu.signature.find("tok:zh"), std::string::npos);
  options.target_language = "de";
  EXPECT_NE(score_hypotheses(hyps, refs, options).bleu.signature.find("tok:13a"),
            std::string::npos);
  options.chrf_word_order = 7;
  EXPECT_THROW(options.check(), Error);
}

#if NMT_WITH_MECAB
TEST(MetricGoldens, JaMecabMatchesSacrebleuWithDebiansMecab) {
  // sacreBLEU's ja-mecab wants pip's mecab-python3 and ipadic, which this machine cannot get.
  // This golden is sacreBLEU 2.6.0 run on Debian's python3-mecab (MeCab 0.996) and
  // mecab-ipadic-utf8, with `ipadic` a two-line stand-in naming Debian's dictionary and python -O
  // skipping its entry-count assertion (Debian's build has 392127 entries, pip's 392126):
  //   sacrebleu ja.ref -i ja.hyp -m bleu -tok ja-mecab -w 6  ->  54.116395
  EXPECT_EQ(tokenize_ja_mecab("青いシャツを着た男性がはしごの上に立って窓を拭いている。"),
            "青い シャツ を 着 た 男性 が はしご の 上 に 立っ て 窓 を 拭い て いる 。");
  const auto hyps = read_lines(kMetricFixtures + "ja.hyp");
  const auto refs = read_lines(kMetricFixtures + "ja.ref");
  ScoringOptions options;
  options.target_language = "ja";
  const BleuScore bleu = score_hypotheses(hyps, refs, options).bleu;
  EXPECT_NEAR(bleu.score, 54.116395, 5e-7);
  EXPECT_EQ(bleu.signature, "nrefs:1|case:mixed|eff:no|tok:ja-mecab-0.996-IPA|smooth:exp|version:" +
                                metric_signature_version());
}
#endif

}  // namespace
}  // namespace nmt

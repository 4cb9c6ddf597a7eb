#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/case_mapping.h"
#include "core/config.h"
#include "data/augment.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "test_util.h"

namespace nmt {
namespace {

TEST(Augment, DropsOnlySentenceFinalPunctuation) {
  EXPECT_EQ(drop_final_punctuation("A dog runs."), "A dog runs");
  EXPECT_EQ(drop_final_punctuation("a dog is sleeping . "), "a dog is sleeping");
  EXPECT_EQ(drop_final_punctuation("Wirklich?!"), "Wirklich");
  EXPECT_EQ(drop_final_punctuation("Und dann…"), "Und dann");
  EXPECT_EQ(drop_final_punctuation("犬が走る。"), "犬が走る");
  EXPECT_EQ(drop_final_punctuation("A dog runs"), "A dog runs");
  EXPECT_EQ(drop_final_punctuation("He said \"hi.\""), "He said \"hi.\"");  // ends in a quote
  EXPECT_EQ(drop_final_punctuation("One, two,"), "One, two,");              // not sentence-final
  EXPECT_EQ(drop_final_punctuation("..."), "");
  EXPECT_EQ(drop_final_punctuation(""), "");
}

/// The characters of `text` that are not letters, in order.
std::string non_letters(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (!std::isalpha(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

TEST(Augment, TyposChangeLettersOnlyAndFollowTheSeed) {
  const std::string text = "A man in a blue shirt, 42 years old, is standing on a ladder.";
  std::mt19937_64 a(7), b(7), c(8);
  const std::string noisy = add_typos(text, 2, a);
  EXPECT_NE(noisy, text);
  EXPECT_EQ(add_typos(text, 2, b), noisy);  // the same draws, the same typos
  EXPECT_NE(add_typos(text, 2, c), noisy);
  // Spaces, digits and punctuation are untouched, and two typos move the length by at most 2.
  EXPECT_EQ(non_letters(noisy), non_letters(text));
  EXPECT_LE(std::abs(int(noisy.size()) - int(text.size())), 2);
  // Over many draws every kind of typo shows: shorter, longer, and the same length changed.
  bool shorter = false, longer = false, same_length = false;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    std::mt19937_64 rng(seed);
    const std::string one = add_typos("the quick brown fox", 1, rng);
    EXPECT_NE(one, "the quick brown fox") << seed;
    shorter |= one.size() < 19;
    longer |= one.size() > 19;
    same_length |= one.size() == 19;
  }
  EXPECT_TRUE(shorter && longer && same_length);
  std::mt19937_64 rng(1);
  EXPECT_EQ(add_typos("42 - 7 !", 3, rng), "42 - 7 !");  // no letter, nothing to change
  EXPECT_EQ(add_typos("Straße", 1, rng).find('\xC3') == std::string::npos, false);  // UTF-8 kept
  // A byte that is not UTF-8 is kept as it was, never replaced or dropped.
  const std::string bad = add_typos("ab \xff cd", 2, rng);
  EXPECT_NE(bad.find(" \xff "), std::string::npos) << bad;
  EXPECT_EQ(drop_final_punctuation("x\xff."), "x\xff");
  EXPECT_EQ(typos_for(0), 0);
  EXPECT_EQ(typos_for(40), 1);
  EXPECT_EQ(typos_for(41), 2);
}

TEST(Augment, EachModificationGoesToTheRightSides) {
  AugmentCounts counts;
  const auto apply = [&](const AugmentConfig& config, std::string src, std::string tgt) {
    std::mt19937_64 rng(3);
    augment_pair(config, "en", "de", rng, src, tgt, counts);
    return std::make_pair(src, tgt);
  };
  AugmentConfig upper;
  upper.upper = 1.0;
  EXPECT_EQ(apply(upper, "A man on the street.", "Ein Mann auf der Straße."),
            std::make_pair(std::string("A MAN ON THE STREET."),
                           std::string("EIN MANN AUF DER STRASSE.")));
  AugmentConfig title;
  title.title = 1.0;
  EXPECT_EQ(apply(title, "a man in a blue shirt.", "ein Mann in einem blauen Hemd."),
            std::make_pair(std::string("A Man In A Blue Shirt."),
                           std::string("Ein Mann In Einem Blauen Hemd.")));
  AugmentConfig punct;
  punct.no_final_punct = 1.0;
  EXPECT_EQ(apply(punct, "A dog runs.", "Ein Hund rennt."),
            std::make_pair(std::string("A dog runs"), std::string("Ein Hund rennt")));
  // A source without final punctuation leaves its target as it is.
  EXPECT_EQ(apply(punct, "A dog runs", "Ein Hund rennt."),
            std::make_pair(std::string("A dog runs"), std::string("Ein Hund rennt.")));
  AugmentConfig typos;
  typos.typos = 1.0;
  const auto noisy = apply(typos, "A dog runs on the beach.", "Ein Hund rennt am Strand.");
  EXPECT_NE(noisy.first, "A dog runs on the beach.");
  EXPECT_EQ(noisy.second, "Ein Hund rennt am Strand.");  // typos are the source's alone
  EXPECT_EQ(counts.pairs, 5u);
  EXPECT_EQ(counts.upper, 1u);
  EXPECT_EQ(counts.title, 1u);
  EXPECT_EQ(counts.no_final_punct, 1u);
  EXPECT_EQ(counts.typos, 1u);
  EXPECT_EQ(counts.changed, 4u);
}

// Four draws a pair whatever happens: the pairs after one keep their draws when a probability
// changes.
TEST(Augment, EveryPairTakesTheSameDraws) {
  AugmentCounts counts;
  for (const double p : {0.0, 0.5, 1.0}) {
    AugmentConfig config;
    config.upper = config.no_final_punct = config.typos = p;
    std::mt19937_64 rng(11), reference(11);
    std::string src = "A dog runs.", tgt = "Ein Hund rennt.";
    augment_pair(config, "en", "de", rng, src, tgt, counts);
    for (int i = 0; i < 4; ++i) reference();
    EXPECT_EQ(rng(), reference()) << p;
  }
}

// An epoch's examples under data.augment: about the configured share of pairs changed, each as
// its modification says (an upper-cased pair is the encoding of its text upper-cased), the others
// the split's own ids; the same for the same (seed, epoch) and different across epochs.
TEST(Augment, EpochExamplesAreModifiedPerEpochAndReproducible) {
  const auto run = test::temp_dir("augment_epoch");
  DataConfig data = test::tiny_data();
  const Tokenizer tokenizer = prepare_tokenizer(data, run);
  const EncodedSplit split = load_split(data, "tiny", tokenizer);
  data.augment.upper = 0.25;
  ASSERT_TRUE(resegments_each_epoch(data));
  AugmentCounts counts;
  const auto epoch0 = epoch_examples(data, split, tokenizer, 0, &counts);
  ASSERT_EQ(epoch0.size(), split.examples.size());
  EXPECT_EQ(counts.pairs, split.examples.size());
  EXPECT_NEAR(double(counts.upper) / double(counts.pairs), 0.25, 0.06);
  size_t upper = 0;
  for (size_t i = 0; i < epoch0.size(); ++i) {
    if (epoch0[i].src == split.examples[i].src) {
      EXPECT_EQ(epoch0[i].tgt, split.examples[i].tgt) << i;
      continue;
    }
    ++upper;
    EXPECT_EQ(epoch0[i].src, tokenizer.encode_src(upper_case(split.src_text[i], "en"))) << i;
    EXPECT_EQ(epoch0[i].tgt, tokenizer.encode_tgt(upper_case(split.tgt_text[i], "de"))) << i;
  }
  EXPECT_EQ(upper, counts.upper);
  EXPECT_TRUE(test::same_examples(epoch_examples(data, split, tokenizer, 0), epoch0));
  EXPECT_FALSE(test::same_examples(epoch_examples(data, split, tokenizer, 1), epoch0));
  // A modification applies to both sides or to neither: with data.max_len at the longest pair as
  // written, the pairs whose capitals need more pieces than that on either side stay as they were.
  DataConfig tight = data;
  tight.augment = AugmentConfig();
  tight.augment.upper = 1.0;
  tight.max_len = 0;
  for (const auto& example : split.examples) {
    tight.max_len = std::max<int64_t>(tight.max_len, int64_t(example.src.size()));
    tight.max_len = std::max<int64_t>(tight.max_len, int64_t(example.tgt.size()));
  }
  AugmentCounts tight_counts;
  const auto bounded = epoch_examples(tight, split, tokenizer, 0, &tight_counts);
  size_t kept = 0;
  for (size_t i = 0; i < bounded.size(); ++i) {
    const bool original =
        bounded[i].src == split.examples[i].src && bounded[i].tgt == split.examples[i].tgt;
    const bool both = bounded[i].src == tokenizer.encode_src(upper_case(split.src_text[i], "en")) &&
                      bounded[i].tgt == tokenizer.encode_tgt(upper_case(split.tgt_text[i], "de"));
    EXPECT_TRUE(original || both) << i;
    kept += original && !both;
  }
  EXPECT_GT(kept, 0u);
  EXPECT_EQ(tight_counts.too_long, kept);
  EXPECT_EQ(tight_counts.upper + tight_counts.too_long, tight_counts.pairs);
  // Off, an epoch is the split itself.
  data.augment = AugmentConfig();
  EXPECT_TRUE(test::same_examples(epoch_examples(data, split, tokenizer, 0), split.examples));
}

}  // namespace
}  // namespace nmt

// text/casing.h: ALL CAPS and Title Case detected, sentence case and upper case by ICU.
#include <string>

#include <gtest/gtest.h>

#include "text/casing.h"

namespace nmt {
namespace {

TEST(Casing, ShoutingAndHeadingsAreDetectedAndOrdinaryTextIsNot) {
  EXPECT_EQ(detect_casing("A MAN IN A BLUE SHIRT IS STANDING ON A LADDER."), SourceCasing::kUpper);
  EXPECT_EQ(detect_casing("A Man In A Blue Shirt Is Standing On A Ladder."), SourceCasing::kTitle);
  EXPECT_EQ(detect_casing("A Man in a Blue Shirt Is Standing on a Ladder"), SourceCasing::kTitle);
  EXPECT_EQ(detect_casing("A man in a blue shirt is standing on a ladder."),
            SourceCasing::kAsWritten);
  EXPECT_EQ(detect_casing("A Boston Terrier is running on green grass."), SourceCasing::kAsWritten);
  EXPECT_EQ(detect_casing("I live in the USA."), SourceCasing::kAsWritten);
  EXPECT_EQ(detect_casing("OK."), SourceCasing::kAsWritten);        // too few letters to shout
  EXPECT_EQ(detect_casing("Two Dogs."), SourceCasing::kAsWritten);  // too few words for a title
}

TEST(Casing, SentenceCaseAndUpperCaseUseFullCaseMappings) {
  EXPECT_EQ(sentence_case("A MAN IN A BLUE SHIRT.", "en"), "A man in a blue shirt.");
  EXPECT_EQ(sentence_case("\"ÄRGER IM BÜRO\"", "de"), "\"Ärger im büro\"");
  EXPECT_EQ(sentence_case("THE REST, AS IT WAS", "en", false), "the rest, as it was");
  EXPECT_EQ(upper_case("Ein Mann auf der Straße.", "de"), "EIN MANN AUF DER STRASSE.");
}

}  // namespace
}  // namespace nmt

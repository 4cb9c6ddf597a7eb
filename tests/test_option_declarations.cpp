// core/option.h: a key is declared once, in its section's fields(), and the range checks (every
// section) and for decode keys the command line and the server's requests follow from that
// declaration. These tests go over every
// key, so a new key is covered without a line here: its flag is in `translate --help`, a request
// may set it exactly when it says so, and its declared range is enforced.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <type_traits>

#include "cli_test_util.h"
#include "config_test_util.h"
#include "core/config.h"
#include "serve/request.h"
#include "test_util.h"

namespace nmt {
namespace {

TEST(OptionDeclarations, EveryDecodeKeyHasItsFlagOnTheCommandLine) {
  const auto dir = test::temp_dir("option_flags");
  const auto run = test::run_nmt("translate --help", "", dir);
  ASSERT_EQ(run.code, 0) << run.err;
  int keys = 0;
  DecodeConfig().fields([&](const char* key, auto&, const Option& option) {
    ++keys;
    EXPECT_NE(run.out.find("--" + option.command_flag(key) + " "), std::string::npos)
        << "decode." << key << ": no --" << option.command_flag(key) << " in translate --help";
  });
  EXPECT_GE(keys, 17);
  for (const char* command : {"evaluate", "serve", "score", "bench decode"}) {
    const auto help = test::run_nmt(std::string(command) + " --help", "", dir);
    EXPECT_NE(help.out.find("--set "), std::string::npos) << command << " has no --set";
  }
}

// A request sets exactly the keys declared settable by requests, with the value it gives; every
// other decode key is an unknown field (a client cannot point the server at a file, say).
TEST(OptionDeclarations, RequestsSetExactlyTheKeysDeclaredForThem) {
  const auto changed = test::every_field_changed()["decode"];
  int settable = 0;
  DecodeConfig().fields([&](const char* key, auto&, const Option& option) {
    nlohmann::json body = {{"text", "a dog ."}, {key, changed.at(key)}};
    if (!option.in_request) {
      try {
        parse_translate_request(body.dump(), DecodeConfig{}, ServeLimits{});
        ADD_FAILURE() << "a request set decode." << key;
      } catch (const RequestError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown field \"" + std::string(key)),
                  std::string::npos)
            << e.what();
      }
      return;
    }
    ++settable;
    const auto request = parse_translate_request(body.dump(), DecodeConfig{}, ServeLimits{});
    Config parsed;
    parsed.decode = request.decode;
    EXPECT_EQ(config_to_json(parsed)["decode"][key], changed.at(key)) << key;
    // A value of the wrong type is refused naming the field.
    body[key] = nlohmann::json::array();
    test::expect_error([&] { parse_translate_request(body.dump(), DecodeConfig{}, ServeLimits{}); },
                       "\"" + std::string(key) + "\"");
  });
  EXPECT_GE(settable, 6);
}

/// Checks the declared ranges of `section` (its keys are `prefix`.key); returns how many.
template <class Section>
int check_declared_ranges(const std::string& prefix, Section section) {
  int ranged = 0;
  section.fields([&](const char* key, auto& field, auto&&... declared) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (sizeof...(declared) == 1 && std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const Option& option = (declared, ...);
      if (option.min == -Option::kNone) return;
      ++ranged;
      const double step = std::is_integral_v<T> ? 1.0 : 0.001;
      const std::string name = prefix + "." + std::string(key);
      for (const double bad : {option.min - step, option.max + step}) {
        if (bad == Option::kNone) continue;
        Config config;
        test::expect_error(
            [&] { apply_overrides(config, {name + "=" + nlohmann::json(T(bad)).dump()}); },
            name + " = ");
      }
      // The bound itself passes its own check (another key's rule may still object to it).
      for (const double bound : {option.min, option.max}) {
        if (bound == Option::kNone) continue;
        Config config;
        try {
          apply_overrides(config, {name + "=" + nlohmann::json(T(bound)).dump()});
        } catch (const Error& e) {
          EXPECT_EQ(std::string(e.what()).find(name + " = " + nlohmann::json(T(bound)).dump() +
                                               " is out of range"),
                    std::string::npos)
              << e.what();
        }
      }
    }
  });
  return ranged;
}

// Every declared range, in every section, is enforced by validate() naming the key: just below
// the minimum and just above the maximum are refused, the bounds themselves are not.
TEST(OptionDeclarations, DeclaredRangesAreEnforcedNamingTheKey) {
  EXPECT_GE(check_declared_ranges("decode", DecodeConfig()), 8);
  EXPECT_GE(check_declared_ranges("model", ModelConfig()), 11);
  EXPECT_GE(check_declared_ranges("data", DataConfig()), 10);
  EXPECT_GE(check_declared_ranges("data.augment", AugmentConfig()), 4);
  EXPECT_GE(check_declared_ranges("train", TrainConfig()), 23);
}

}  // namespace
}  // namespace nmt

// Bad input never crashes and never hangs: every case of bad_input_cases.h runs the real binary
// and must exit non-zero (not by a signal) with a message naming the culprit; docs/errors.md
// must list exactly these cases.
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "bad_input_cases.h"
#include "corpus_test_util.h"
#include "decode_test_util.h"
#include "spawn_util.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

std::string random_bytes(size_t size, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (auto& byte : bytes) byte = char(generator() & 0xFF);
  bytes[0] = char(0xFF);  // never valid UTF-8, never a zip header
  return bytes;
}

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

void write_checkpoints(const fs::path& d) {
  const Config config = test::fixture_config();
  Seq2Seq model = test::fixture_model(1);
  save_checkpoint(d / "ckpt.pt", config, model, test::fixture_tokenizer(), {});
  Config wide = config;
  wide.model.d_model = 64;
  save_checkpoint(d / "shape.pt", wide, model, test::fixture_tokenizer(), {});  // d32 weights
  Seq2Seq wide_model(wide.model);
  save_checkpoint(d / "wide.pt", wide, wide_model, test::fixture_tokenizer(), {});
  // The same shapes over another SentencePiece model: no ensemble member for ckpt.pt.
  const fs::path fixtures = NMT_FIXTURES_DIR;
  DataConfig data = config.data;
  data.dir = fixtures.string();
  data.train = {CorpusSpec::of_split("tiny")};
  data.vocab_size = 150;
  data.character_coverage = 0.98;  // not the fixture tokenizer's
  const auto text = read_parallel(fixtures / "tiny.en", fixtures / "tiny.de");
  const auto foreign = Tokenizer::train(data, text.src, text.tgt, d / "foreign_spm");
  if (foreign.src_vocab_size() == config.model.src_vocab_size) {
    save_checkpoint(d / "foreign_tok.pt", config, model, foreign, {});
  }
  write(d / "empty_constraint.jsonl", "[\"hund\", \"\"]\n");
  write(d / "long_constraints.jsonl", "[\"ein hund rennt im schnee und ein mann\"]\n");
  write(d / "dict_constraints.jsonl", "{\"a\": 1}\n");
  const std::string bytes = test::slurp(d / "ckpt.pt");
  write(d / "truncated.pt", bytes.substr(0, bytes.size() / 2));
  write(d / "random.pt", random_bytes(4096, 1));
  write(d / "empty.pt", "");
  write(d / "text.pt", R"({"format": "nmt-checkpoint", "version": 1})");
}

void write_data_and_configs(const fs::path& d) {
  const fs::path fixtures = NMT_FIXTURES_DIR;
  for (const char* name : {"tiny.en", "tiny.de", "tiny_val.en", "tiny_val.de"}) {
    write(d / "data" / name, test::slurp(fixtures / name));
  }
  write(d / "data/mis.en", "one\ntwo\nthree\n");
  write(d / "data/mis.de", "eins\nzwei\n");
  write(d / "data/bin.en", random_bytes(4096, 2));
  write(d / "data/bin.de", random_bytes(4096, 3));
  write(d / "data/void.en", "");
  write(d / "data/void.de", "");
  write(d / "binary.txt", random_bytes(4096, 4));
  write(d / "other.shortlist",
        "# nmt shortlist: vocabulary 0123456789abcdef, 150 source and 150 target pieces, 50 per "
        "source, 100 frequent\n\t</s>\n");
  write(d / "data/short.tsv", "a dog\tein Hund\nonly one field\n");
  const std::string gz = test::gzip(test::slurp(fixtures / "tiny.en"));
  write(d / "data/cut.en.gz", gz.substr(0, gz.size() / 2));
  write(d / "data/garbage.gz", "\x1f\x8b" + random_bytes(4096, 6));
  test::write_foreign_spm_model(fixtures / "tiny.en", d / "foreign");
  Config tiny = test::tiny_config(d / "newrun");
  tiny.data.dir = (d / "data").string();
  save_config(tiny, d / "tiny.json");
  write(d / "bad.json", "{ not json");
  write(d / "list.json", "[]");
  write(d / "section.json", R"({"modle": {}})");
  write(d / "key.json", R"({"model": {"d_modl": 32}})");
  write(d / "type.json", R"({"model": {"d_model": "big"}})");
  write(d / "heads.json", R"({"model": {"d_model": 30, "n_heads": 4}})");
  write(d / "nolimit.json", R"({"train": {"max_epochs": 0}})");
  write(d / "longname.json", R"({"train": {"name": ")" + std::string(100000, 'a') + "\"}}");
  for (const char* sub : {"notrun", "nolast", "broken"}) fs::create_directories(d / sub);
  save_config(tiny, d / "nolast/config.json");
  save_config(tiny, d / "broken/config.json");
  write(d / "broken/last.pt", random_bytes(4096, 5));
}

/// A trained run (one step) in d/run, for the resume cases.
void write_run(const fs::path& d) {
  Config config = test::tiny_config(d / "run");
  config.train.max_epochs = 0;
  config.train.max_steps = 1;
  std::ostringstream console;
  Trainer(config, false, console).run();
}

std::string substitute(std::string text, const fs::path& d) {
  for (size_t at; (at = text.find("{d}")) != std::string::npos;) text.replace(at, 3, d.string());
  return text;
}

/// The output line that holds `message`, with the scratch directory written as {d}.
std::string message_line(const std::string& output, const std::string& message, const fs::path& d) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(message) == std::string::npos) continue;
    for (size_t at; (at = line.find(d.string())) != std::string::npos;) {
      line.replace(at, d.string().size(), "{d}");
    }
    // No machine's paths in docs/errors.md: the source tree is written as "nmt/".
    const std::string source = std::string(NMT_SOURCE_DIR) + "/";
    for (size_t at; (at = line.find(source)) != std::string::npos;) {
      line.replace(at, source.size(), "nmt/");
    }
    return line.size() > 300 ? line.substr(0, 300) + "..." : line;
  }
  return "";
}

class BadInput : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInput, FailsWithAMessageNamingTheCulprit) {
  const std::string group = GetParam();
  const auto d = test::temp_dir("bad_input_" + group);
  write_checkpoints(d);
  write_data_and_configs(d);
  if (group == "resume") write_run(d);
  const char* rows = std::getenv("NMT_BAD_INPUT_ROWS");  // collects docs/errors.md rows
  int count = 0;
  for (const auto& c : test::bad_input_cases()) {
    if (c.group != group) continue;
    SCOPED_TRACE(c.name);
    ++count;
    std::vector<std::string> args;
    for (const auto& arg : c.args) args.push_back(substitute(arg, d));
    test::SpawnOptions options;
    if (*c.stdin_file) options.stdin_file = d / c.stdin_file;
    const auto run = test::run_nmt(args, d, c.name, options, 60);
    EXPECT_GT(run.code, 0) << run.output;
    EXPECT_LT(run.code, 128) << "killed by a signal:\n" << run.output;
    EXPECT_NE(run.output.find(c.message), std::string::npos) << run.output;
    for (const char* crash : {"terminate called", "Segmentation", "Aborted", "Sanitizer",
                              "runtime error:", "core dumped"}) {
      EXPECT_EQ(run.output.find(crash), std::string::npos) << run.output;
    }
    if (rows != nullptr) {
      std::ofstream(rows, std::ios::app) << c.group << '\t' << c.name << '\t' << c.message << '\t'
                                         << message_line(run.output, c.message, d) << '\n';
    }
  }
  EXPECT_GT(count, 0) << "no cases in group " << group;
  remove_tree(d);
}

INSTANTIATE_TEST_SUITE_P(Groups, BadInput,
                         ::testing::Values("cli", "config", "data", "checkpoint", "resume",
                                           "translate", "evaluate"));

TEST(BadInputCases, AtLeastFortyAndEachListedInDocsErrorsWithItsMessage) {
  const auto& cases = test::bad_input_cases();
  EXPECT_GE(cases.size(), 40u);
  // docs/errors.md rows: | group | `name` | `message fragment` | message as printed |
  std::ifstream doc(fs::path(NMT_SOURCE_DIR) / "docs/errors.md");
  ASSERT_TRUE(doc) << "docs/errors.md is missing";
  const std::regex row(R"(^\| ([a-z]+) \| `([a-z0-9-]+)` \| `([^`]+)` \| (.*) \|$)");
  std::set<std::string> documented, expected, names;
  for (std::string line; std::getline(doc, line);) {
    std::smatch match;
    if (!std::regex_match(line, match, row)) continue;
    documented.insert(match[1].str() + " " + match[2].str() + " " + match[3].str());
    EXPECT_NE(match[4].str().find(match[3].str()), std::string::npos)
        << "the printed message of " << match[2] << " does not contain its fragment";
  }
  for (const auto& c : cases) {
    expected.insert(std::string(c.group) + " " + c.name + " " + c.message);
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name " << c.name;
  }
  EXPECT_EQ(documented, expected) << "docs/errors.md and tests/bad_input_cases.h differ";
}

TEST(BadInputRobustness, AHundredThousandCharacterLineIsTranslatedTruncatedWithAWarning) {
  const auto d = test::temp_dir("bad_input_long");
  write_checkpoints(d);
  std::string line;
  while (line.size() < 100000) line += "a dog runs ";
  write(d / "long.txt", line.substr(0, 100000) + "\nA dog.\n");
  const auto run = test::run_nmt(
      {"translate", "--checkpoint", (d / "ckpt.pt").string(), "--input", (d / "long.txt").string()},
      d, "long");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("warning: line 1: "), std::string::npos) << run.output;
  remove_tree(d);
}

}  // namespace
}  // namespace nmt

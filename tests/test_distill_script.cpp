// scripts/distill.sh end to end on the tiny fixture: a teacher run directory in, a student with
// its shortlist, evaluation and CTranslate2 export out; an interrupted run resumes without
// translating a chunk twice or reading a partial one; a student tokenizer other than the
// teacher's is refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "core/config.h"
#include "cpu/int8_linear.h"
#include "decode_test_util.h"
#include "test_util.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

struct ScriptRun {
  int code;
  std::string out;
};

/// Runs scripts/distill.sh with `env` (VAR=value ...) and `args`, output captured.
ScriptRun distill(const fs::path& dir, const std::string& env, const std::string& args) {
  const fs::path log = dir / "distill.log";
  const std::string command = "cd " + std::string(NMT_SOURCE_DIR) + " && env NMT=" + NMT_BINARY +
                              " " + env + " scripts/distill.sh " + args + " > " + log.string() +
                              " 2>&1";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_text(log)};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class DistillScript : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::int8_available()) GTEST_SKIP() << "built without oneDNN (the student runs int8)";
    // The teacher: a run directory as nmt train leaves one.
    fs::create_directories(teacher_);
    fs::rename(test::save_fixture_checkpoint(teacher_), teacher_ / "best.pt");
    save_config(test::fixture_config(), teacher_ / "config.json");
    test::fixture_tokenizer().save({teacher_ / "spm.model"});
    Config student = test::tiny_config(dir_.path() / "student");
    student.train.max_epochs = 0;
    student.train.max_steps = 3;
    save_config(student, dir_.path() / "student.json");
  }

  std::string env() const {
    return "STUDENT_CONFIG=" + (dir_.path() / "student.json").string() +
           " CHUNK=150 BEAM=2 FILTER=0.1 EVAL_SPLITS=tiny_val";
  }

  test::TempDir dir_ = test::temp_dir("distill_script");
  fs::path teacher_ = dir_.path() / "teacher";
};

TEST_F(DistillScript, MakesAStudentAndResumesWithoutTranslatingTwice) {
  const fs::path student = dir_.path() / "student", work = student / "distill";
  const auto first = distill(dir_.path(), env(), teacher_.string());
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_EQ(count(first.out, "translate: translated chunk_"), 3u) << first.out;  // 400 lines
  for (const char* file :
       {"distill/teacher.all", "distill/train.src", "distill/filter.json", "distill/stages.jsonl",
        "distill/settings.json", "shortlist.txt", "results.json", "ctranslate2/model.bin",
        "ctranslate2/vmap.txt", "spm.model"}) {
    EXPECT_TRUE(fs::exists(student / file)) << file;
  }
  // The student reuses the teacher's tokenizer, byte for byte.
  EXPECT_EQ(test::read_text(student / "spm.model"), test::read_text(teacher_ / "spm.model"));
  // 400 pairs: the empty translations dropped, then a tenth of the rest by the teacher's score.
  const auto kept = nlohmann::json::parse(test::read_text(work / "filter.json"));
  const int64_t pairs = kept.at("pairs"), empty = kept.at("empty_dropped");
  EXPECT_EQ(pairs, 400);
  const auto dropped = int64_t(0.1 * double(pairs - empty) + 0.5);  // as distill.sh rounds
  EXPECT_EQ(kept.at("score_dropped").get<int64_t>(), dropped);
  EXPECT_EQ(kept.at("kept").get<int64_t>(), pairs - empty - dropped);
  EXPECT_EQ(count(test::read_text(work / "stages.jsonl"), "\"stage\""), 6u);

  // Interrupted while translating chunk 2: its output is a partial .part file, nothing after it.
  const std::string translated = test::read_text(work / "teacher.all");
  fs::remove(work / "hyp" / "chunk_00001");
  std::ofstream(work / "hyp" / "chunk_00001.part") << "half a chunk\n";
  fs::remove(work / "teacher.all");
  fs::remove(work / "filter.json");
  const auto again = distill(dir_.path(), env(), teacher_.string());
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(count(again.out, "translate: translated chunk_"), 1u) << again.out;
  EXPECT_NE(again.out.find("translated chunk_00001"), std::string::npos) << again.out;
  EXPECT_EQ(count(again.out, "translate: kept chunk_"), 2u) << again.out;
  EXPECT_EQ(test::read_text(work / "teacher.all"), translated);
  EXPECT_FALSE(fs::exists(work / "hyp" / "chunk_00001.part"));
  EXPECT_NE(again.out.find("train: done"), std::string::npos) << again.out;
}

TEST_F(DistillScript, AStudentTokenizerOtherThanTheTeachersIsRefusedNamingBoth) {
  Config student = test::tiny_config(dir_.path() / "other");
  student.data.spm_model = (dir_.path() / "elsewhere.model").string();
  save_config(student, dir_.path() / "other.json");
  const auto run = distill(dir_.path(), "STUDENT_CONFIG=" + (dir_.path() / "other.json").string(),
                           teacher_.string());
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.out.find("elsewhere.model, data.spm_model) is not the teacher's (" +
                         (teacher_ / "spm.model").string()),
            std::string::npos)
      << run.out;
  EXPECT_FALSE(fs::exists(dir_.path() / "other" / "distill" / "hyp"));  // nothing translated
}

}  // namespace
}  // namespace nmt

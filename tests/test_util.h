#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <system_error>

#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/config.h"
#include "core/error.h"
#include "core/files.h"
#include "data/pair_store.h"

namespace nmt::test {

/// A fresh, empty directory under the system temp dir, unique to this test process and `name`,
/// removed with everything in it when the object goes out of scope.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("nmt_test_" + std::to_string(::getpid()) + "_" + name)) {
    remove_tree(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // never throw from a destructor; a leftover is harmless
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  operator const std::filesystem::path&() const { return path_; }  // NOLINT: a path, implicitly
  std::filesystem::path operator/(const std::filesystem::path& child) const {
    return path_ / child;
  }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// A TempDir named `name` (copy elision: the returned object is the caller's).
inline TempDir temp_dir(const std::string& name) { return TempDir(name); }

/// Whether AddressSanitizer's allocator serves malloc here (a sanitized nmt_core links its
/// run time into the test binary, whose own sources are built without the flag): it keeps
/// freed blocks in its quarantine and counts nothing in glibc's heap statistics.
inline bool asan_allocator() { return dlsym(RTLD_DEFAULT, "__asan_init") != nullptr; }

/// The whole content of a file ("" if it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Expects `f` to throw nmt::Error whose message contains `needle`.
inline void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an nmt::Error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

/// A small, fast training config over the fixture corpus (tests/fixtures/tiny.*), writing its
/// run into `run_dir`. CPU, fp32, one thread: deterministic.
inline Config tiny_config(const std::filesystem::path& run_dir) {
  Config c;
  c.model.d_model = 32;
  c.model.n_heads = 2;
  c.model.encoder_layers = 1;
  c.model.decoder_layers = 1;
  c.model.d_ff = 64;
  c.model.max_len = 64;
  c.data.dir = NMT_FIXTURES_DIR;
  c.data.train = {CorpusSpec::of_split("tiny")};
  c.data.valid = {CorpusSpec::of_split("tiny_val")};
  c.data.vocab_size = 150;
  c.data.max_len = 63;  // model.max_len - 1 (eos/bos)
  c.data.batch_tokens = 400;
  c.train.run_dir = run_dir.string();
  c.train.device = "cpu";
  c.train.threads = 1;
  c.train.lr = 3e-3;
  c.train.warmup.steps = 10;
  c.train.max_epochs = 1;
  c.train.log_every = 1;
  c.train.valid_bleu = false;
  c.train.metric = Metric::kLoss;
  c.train.keep_checkpoints = 2;
  c.train.average_snapshots = 0;    // test_snapshots.cpp turns the final average on
  c.train.allow_small_data = true;  // 400 pairs
  return c;
}

/// The fixture's training split (tests/fixtures/tiny.{en,de}) with a small vocabulary.
inline DataConfig tiny_data() {
  DataConfig data;
  data.dir = NMT_FIXTURES_DIR;
  data.train = {CorpusSpec::of_split("tiny")};
  data.vocab_size = 150;
  return data;
}

/// Whether two lists of examples hold the same pairs, in order.
inline bool same_examples(const std::vector<Example>& a, const std::vector<Example>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].src != b[i].src || a[i].tgt != b[i].tgt) return false;
  }
  return a.size() == b.size();
}

}  // namespace nmt::test

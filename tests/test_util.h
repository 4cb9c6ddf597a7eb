#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nmt::test {

/// A fresh, empty directory under the system temp dir, unique to this test process and `name`.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("nmt_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
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

}  // namespace nmt::test

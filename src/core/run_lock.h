#pragma once

#include <filesystem>

namespace nmt {

/// One writer per run directory: an advisory lock (flock) on `<dir>/train.lock`, held for the
/// object's lifetime and released by the kernel when the process dies, however it dies (so a
/// SIGKILLed run can be resumed without clean-up). The file records the holder's pid.
class RunDirLock {
 public:
  /// Takes the lock at once or throws an nmt::Error naming the directory and the pid of the
  /// process that holds it. Never waits.
  explicit RunDirLock(const std::filesystem::path& dir);
  ~RunDirLock();
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

  static constexpr const char* kFileName = "train.lock";

 private:
  int fd_ = -1;
};

}  // namespace nmt

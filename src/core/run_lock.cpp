#include "core/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.h"

namespace nmt {

RunDirLock::RunDirLock(const std::filesystem::path& dir) {
  const auto path = dir / kFileName;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(path.string() + ": cannot open the run directory's lock file (" +
                std::strerror(errno) + ")");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int code = errno;
    char buffer[32] = {};
    const ssize_t n = ::pread(fd_, buffer, sizeof buffer - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (code != EWOULDBLOCK) {
      throw Error(path.string() + ": cannot lock the run directory (" + std::strerror(code) + ")");
    }
    const std::string pid = n > 0 ? std::string(buffer, size_t(n)) : std::string("unknown");
    throw Error(dir.string() + " is in use by another nmt train (pid " +
                pid.substr(0, pid.find_first_of("\n ")) + ", lock " + path.string() +
                "): wait for it to finish or stop it first");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the pid; only a refused process's message loses it.
  }
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace nmt

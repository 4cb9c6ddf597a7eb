#include "core/files.h"

#include <ftw.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.h"

namespace nmt {
namespace {

// The entry nftw's callback could not remove (nftw passes no user data to its callback).
thread_local std::string failed_entry;
thread_local int failed_errno = 0;

int remove_entry(const char* entry, const struct stat*, int, struct FTW*) {
  if (std::remove(entry) == 0) return 0;
  failed_entry = entry;
  failed_errno = errno;
  return -1;
}

}  // namespace

void remove_tree(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return;
  failed_entry.clear();
  failed_errno = 0;
  // Depth first (children before their directory), physical (links are removed, not followed).
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    const std::string entry = failed_entry.empty() ? path.string() : failed_entry;
    const int code = failed_entry.empty() ? errno : failed_errno;
    throw Error(entry + ": cannot remove (" + std::strerror(code) + ")");
  }
}

}  // namespace nmt

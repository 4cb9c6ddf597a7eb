#include "core/files.h"

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <zlib.h>

#include "core/error.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;

// The entry nftw's callback could not remove (nftw passes no user data to its callback).
thread_local std::string failed_entry;
thread_local int failed_errno = 0;

int remove_entry(const char* entry, const struct stat*, int, struct FTW*) {
  if (std::remove(entry) == 0) return 0;
  failed_entry = entry;
  failed_errno = errno;
  return -1;
}

/// Writes all of `pieces` to `fd` and fsyncs it; returns 0 or the errno of the failure.
int write_and_sync(int fd, const std::vector<std::string_view>& pieces) {
  for (const auto bytes : pieces) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return n < 0 ? errno : ENOSPC;
      done += size_t(n);
    }
  }
  return ::fsync(fd) == 0 ? 0 : errno;
}

}  // namespace

void remove_tree(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  failed_entry.clear();
  failed_errno = 0;
  // Depth first (children before their directory), physical (links are removed, not followed).
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    const std::string entry = failed_entry.empty() ? path.string() : failed_entry;
    const int code = failed_entry.empty() ? errno : failed_errno;
    throw Error(entry + ": cannot remove (" + std::strerror(code) + ")");
  }
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void write_file_atomically(const fs::path& path, const std::string& bytes,
                           const std::string& what) {
  write_file_atomically(path, std::vector<std::string_view>{bytes}, what);
}

void write_file_atomically(const fs::path& path, const std::vector<std::string_view>& pieces,
                           const std::string& what) {
  const fs::path tmp = path.string() + ".tmp";
  const auto fail = [&](int code) {
    ::unlink(tmp.c_str());
    throw Error(tmp.string() + ": cannot write " + what + " (" + std::strerror(code) + "); " +
                path.string() + " is unchanged");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno);
  const int code = write_and_sync(fd, pieces);
  if (::close(fd) != 0 && code == 0) fail(errno);
  if (code != 0) fail(code);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(errno);
  sync_directory(path.parent_path());
}

uint32_t crc32_update(uint32_t crc, const void* data, size_t size) {
  return uint32_t(crc32_z(crc, static_cast<const Bytef*>(data), size));
}

std::string crc32_hex(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof text, "%08lx", static_cast<unsigned long>(crc));
  return text;
}

std::vector<std::pair<int64_t, std::filesystem::path>> numbered_files(
    const std::filesystem::path& dir, const std::string& prefix) {
  std::vector<std::pair<int64_t, std::filesystem::path>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (!entry.is_regular_file(type_ec)) continue;  // a directory of that name is not ours
    const std::string name = entry.path().filename().string();
    const size_t digits = name.size() - prefix.size() - 4;  // "<prefix>_" ... ".pt"
    if (name.size() < prefix.size() + 5 || name.compare(0, prefix.size(), prefix) != 0 ||
        name[prefix.size()] != '_' || name.compare(name.size() - 3, 3, ".pt") != 0) {
      continue;
    }
    const std::string number = name.substr(prefix.size() + 1, digits);
    if (number.empty() || number.size() > 18 ||
        number.find_first_not_of("0123456789") != std::string::npos) {
      continue;  // 18 digits always fit an int64
    }
    found.emplace_back(std::stoll(number), entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

int64_t fingerprint(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return int64_t(hash >> 1);  // non-negative, exact in an int64 sum of one non-zero term
}

}  // namespace nmt

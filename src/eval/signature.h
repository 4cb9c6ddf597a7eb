#pragma once

#include <string>

#include "nmt/version.h"

namespace nmt {

/// The `version:` field of a metric signature. sacreBLEU writes its own version there (Post 2018
/// §3); ours names this project, "nmt-<major>.<minor>", so a reader never mistakes the score for
/// one computed by sacreBLEU itself.
inline std::string metric_signature_version() {
  const std::string version = kVersion;
  const size_t major_end = version.find('.');
  const size_t minor_end =
      major_end == std::string::npos ? major_end : version.find('.', major_end + 1);
  return "nmt-" + version.substr(0, minor_end);
}

}  // namespace nmt

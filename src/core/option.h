#pragma once

#include <algorithm>
#include <limits>
#include <string>

namespace nmt {

/// What a config key declares beside its name and value, where it is declared: in its
/// section's fields() (`f("beam", beam, Option("N", "beam size (1: greedy)").range(1, 1000)
/// .request())`, `f("lr", lr, Option().range(1e-9, 10))`). From it come the range check of every
/// section (config_validate.cpp), the valid values in docs/config.md, and for decode keys the
/// command-line flag and its help (cli/decode_options.cpp) and the server request field
/// (serve/request.cpp); the key's meaning in docs/config.md is its doc comment in config.h. A
/// new option is its field and its fields() line.
struct Option {
  constexpr Option() = default;
  /// A command-line option `--flag VALUE` (the key with '-' for '_' unless flag() renames it).
  constexpr Option(const char* value, const char* text) : value_name(value), help(text) {}

  /// The command-line spelling when it is not the key's ("max-len" for max_len_offset).
  constexpr Option flag(const char* spelling) const {
    Option o = *this;
    o.cli_flag = spelling;
    return o;
  }
  /// Valid values min..max (inclusive); without max, at least min.
  constexpr Option range(double low, double high = kNone) const {
    Option o = *this;
    o.min = low, o.max = high;
    return o;
  }
  /// A server request may set it (its JSON field is the key).
  constexpr Option request() const {
    Option o = *this;
    o.in_request = true;
    return o;
  }
  /// On the command line this word means the empty string ("--shortlist none").
  constexpr Option empty_as(const char* word) const {
    Option o = *this;
    o.empty_word = word;
    return o;
  }

  /// The command-line flag of the key `key`: its own spelling, else the key with '-' for '_'.
  std::string command_flag(const char* key) const {
    std::string flag = *cli_flag != '\0' ? cli_flag : key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
  }

  static constexpr double kNone = std::numeric_limits<double>::infinity();
  const char* value_name = "";  ///< "N" in "--beam N"; "" = not on the command line
  const char* help = "";        ///< the command line's help text
  const char* cli_flag = "";    ///< "" = the key with '-' for '_'
  double min = -kNone, max = kNone;
  bool in_request = false;
  const char* empty_word = "";
};

}  // namespace nmt

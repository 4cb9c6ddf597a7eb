#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.h"

namespace nmt {

// Option values that are one of a few names (model.norm = "pre", train.schedule = "cosine", ...)
// are enums in the typed config. Each enum lists its names once, in a specialisation of
// ChoiceNames; the config reader parses them there (an unknown name is an error listing the
// valid ones) and the writer prints them back, so the JSON keeps its strings.

/// Specialise with `static constexpr std::pair<E, const char*> names[] = {...};`.
template <class E>
struct ChoiceNames;

/// The name of `value` as configs spell it.
template <class E>
const char* choice_name(E value) {
  for (const auto& [candidate, name] : ChoiceNames<E>::names) {
    if (candidate == value) return name;
  }
  return "?";
}

/// The value called `name`, or nullopt.
template <class E>
std::optional<E> parse_choice(std::string_view name) {
  for (const auto& [value, candidate] : ChoiceNames<E>::names) {
    if (name == candidate) return value;
  }
  return std::nullopt;
}

/// The valid names, comma-separated ("post, pre").
template <class E>
std::string choice_list() {
  std::string list;
  for (const auto& entry : ChoiceNames<E>::names) {
    list += (list.empty() ? "" : ", ") + std::string(entry.second);
  }
  return list;
}

/// The value called `name`, or an nmt::Error "<what> '<name>' is not valid: choose one of ...".
template <class E>
E require_choice(const std::string& what, const std::string& name) {
  const auto value = parse_choice<E>(name);
  if (!value) {
    throw Error(what + " '" + name + "' is not valid: choose one of " + choice_list<E>());
  }
  return *value;
}

}  // namespace nmt

#pragma once

#include <cmath>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace nmt {

// Plain records of numbers (TrainingState, FilterStats) as JSON objects, from the fields() their
// struct lists: the one place a new field is declared. A NaN double is written as null and read
// back as NaN; a key the JSON lacks (a file written before the field existed) keeps the field's
// default.

template <class Record>
nlohmann::json fields_to_json(Record record) {
  nlohmann::json object = nlohmann::json::object();
  record.fields([&](const char* key, auto& value) {
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(value)>>) {
      object[key] = std::isnan(value) ? nlohmann::json() : nlohmann::json(value);
    } else {
      object[key] = value;
    }
  });
  return object;
}

template <class Record>
Record fields_from_json(const nlohmann::json& object) {
  Record record;
  record.fields([&](const char* key, auto& value) {
    using T = std::decay_t<decltype(value)>;
    if (!object.contains(key)) return;
    if constexpr (std::is_floating_point_v<T>) {
      value = object.at(key).is_null() ? std::nan("") : object.at(key).get<T>();
    } else {
      value = object.at(key).get<T>();
    }
  });
  return record;
}

}  // namespace nmt

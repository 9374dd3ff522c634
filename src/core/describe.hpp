#pragma once
// Value descriptions for error text: the structure of a value, never the value itself
// ("a string of 12 characters", "an object with 3 keys", "a number", "an array of 2 items").
#include <boost/json/value.hpp>

#include <string>

namespace sluice::core {

std::string describe_value(const boost::json::value& v);

// "a string", "an object", ... (the JSON kind with its article).
std::string describe_kind(const boost::json::value& v);

}  // namespace sluice::core

// Small text helpers for our parsers (the standard library has no trim or
// split; pulling in a string library for three functions is not worth it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace goodput {

// Without leading and trailing white space.
std::string_view Trim(std::string_view s);

// Pieces between `sep`s, each trimmed; "" gives one empty piece.
std::vector<std::string> Split(std::string_view s, char sep);

// ASCII lower case.
std::string Lower(std::string_view s);

// The whole of `s` as a base-10 integer ("12", "-3"); empty for anything else,
// a sign of "+", white space or a number past int64's range included.
std::optional<int64_t> ParseWholeNumber(std::string_view s);

}  // namespace goodput

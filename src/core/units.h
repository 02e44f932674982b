// Parsing and printing of the units users type: durations, byte sizes and
// token counts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace goodput {

// Parses a duration with a unit: "250us", "100ms", "1.5s", "2m" (minutes),
// "1h". Also "ns" and "min". A bare number is rejected, since "100" could mean
// seconds or milliseconds. Returns seconds. Negative values are rejected.
Result<double> ParseDuration(std::string_view text);

// Parses a byte size: "4GiB", "512MiB", "80GB" (decimal, 80e9), "1.5TB",
// "4096" (bytes). Units are case-insensitive; "K/M/G/T[B]" are decimal and
// "Ki/Mi/Gi/Ti[B]" binary, so "4G" is 4e9 bytes and "4Gi" is 4 GiB.
// Zero and negative sizes are rejected; the result is rounded to whole bytes.
Result<int64_t> ParseBytes(std::string_view text);

// Parses a token count as vLLM does for --max-model-len: lowercase suffixes
// are decimal, uppercase binary: "128k" = 128,000, "128K" = 131,072,
// "1m" = 1,000,000, "1M" = 1,048,576, "1g"/"1G" likewise; "25.6k" = 25,600.
// A plain integer is taken as is. The count must be a whole number >= 1.
Result<int64_t> ParseTokenCount(std::string_view text);

// A rate with a decimal SI prefix and an optional unit: "3.35TB/s",
// "900 GB/s" and "3.35e12" are 3.35e12 (unit "B/s"); "989T", "989 TFLOPS" and
// "9.89e14" are 9.89e14 (unit "FLOPS"). `unit` is the one accepted unit
// (case-insensitive). Errors name the text; zero and negative are refused.
Result<double> ParseRate(std::string_view text, std::string_view unit);

// "51.38 GiB" style formatting helpers for tables.
double ToGiB(int64_t bytes);
std::string FormatGiB(int64_t bytes, int decimals = 2);     // "51.38 GiB"
std::string FormatDuration(double seconds);                   // "850 ms", "1.50 s", "42 us"; "-" for NaN
std::string FormatCount(int64_t n);                           // "420,864"

}  // namespace goodput

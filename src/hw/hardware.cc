#include "hw/hardware.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/data_dir.h"
#include "core/json_file.h"
#include "core/text.h"

namespace goodput {
namespace json = boost::json;

int64_t HardwareSpec::TotalMemoryBytes() const {
  if (usable_memory_gib) return static_cast<int64_t>(std::llround(*usable_memory_gib * 1024.0 * 1024 * 1024));
  return memory_bytes;
}

namespace {

// `by_precision`'s entry for `precision`, else `fallback`.
double ForPrecision(const std::map<std::string, double>& by_precision, const std::string& precision, double fallback) {
  auto it = by_precision.find(precision);
  return it == by_precision.end() ? fallback : it->second;
}

}  // namespace

double HardwareSpec::ComputeEfficiencyFor(const std::string& precision) const {
  return ForPrecision(compute_efficiency_by_precision, precision, compute_efficiency);
}

double HardwareSpec::AttentionEfficiencyFor(const std::string& precision) const {
  return ForPrecision(attention_efficiency_by_precision, precision, compute_efficiency);
}

double HardwareSpec::ExpertEfficiencyFor(const std::string& precision) const {
  return ForPrecision(expert_efficiency_by_precision, precision, 0);
}

namespace {

Result<double> Num(const json::object& o, const char* key, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end()) return Status::InvalidArgument(fmt::format("{}: missing \"{}\"", where, key));
  if (it->value().is_double()) return it->value().as_double();
  if (it->value().is_int64()) return static_cast<double>(it->value().as_int64());
  return Status::InvalidArgument(fmt::format("{}: \"{}\" must be a number", where, key));
}

std::optional<double> OptNum(const json::object& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return std::nullopt;
  if (it->value().is_double()) return it->value().as_double();
  if (it->value().is_int64()) return static_cast<double>(it->value().as_int64());
  return std::nullopt;
}

// `key`: {"mxfp4": 0.3}, efficiencies by weight precision; absent: empty.
Result<std::map<std::string, double>> EfficiencyByPrecision(const json::object& o, const std::string& key,
                                                             const std::string& at) {
  std::map<std::string, double> out;
  auto it = o.find(key);
  if (it == o.end()) return out;
  if (!it->value().is_object()) return Status::InvalidArgument(at + ": " + key + " must be an object");
  for (const auto& [precision, value] : it->value().as_object()) {
    const double e = value.is_number() ? value.to_number<double>() : 0;
    if (!(e > 0 && e <= 1)) {
      return Status::InvalidArgument(at + ": " + key + "." + std::string(precision) + " must be in (0, 1]");
    }
    out[std::string(precision)] = e;
  }
  return out;
}

Result<HardwareSpec> ParseGpu(const json::value& v, const std::string& where, const CatalogDefaults& defaults) {
  if (!v.is_object()) return Status::InvalidArgument(where + ": entry is not an object");
  const json::object& o = v.as_object();
  HardwareSpec h;
  auto name = o.find("name");
  if (name == o.end() || !name->value().is_string()) return Status::InvalidArgument(where + ": missing \"name\"");
  h.name = std::string(name->value().as_string());
  const std::string at = where + " '" + h.name + "'";
  if (auto d = o.find("display"); d != o.end() && d->value().is_string()) h.display = d->value().as_string();
  if (auto s = o.find("source"); s != o.end() && s->value().is_string()) h.source = s->value().as_string();
  if (auto a = o.find("arch"); a != o.end() && !a->value().is_null()) {
    if (!a->value().is_string() || !IsGpuArch(std::string(a->value().as_string()))) {
      return Status::InvalidArgument(at + ": arch must be a string like \"sm90\" or \"gfx942\"");
    }
    h.arch = a->value().as_string();
  }
  if (auto a = o.find("aliases"); a != o.end() && a->value().is_array()) {
    for (const auto& e : a->value().as_array()) {
      if (e.is_string()) h.aliases.emplace_back(e.as_string());
    }
  }
  GOODPUT_ASSIGN_OR_RETURN(double mem, Num(o, "memory_bytes", at));
  GOODPUT_ASSIGN_OR_RETURN(h.memory_bandwidth, Num(o, "memory_bandwidth", at));
  if (mem <= 0 || h.memory_bandwidth <= 0)
    return Status::InvalidArgument(at + ": memory and bandwidth must be positive");
  h.memory_bytes = static_cast<int64_t>(mem);
  h.usable_memory_gib = OptNum(o, "usable_memory_gib");
  h.bf16_flops = OptNum(o, "bf16_flops");
  h.fp8_flops = OptNum(o, "fp8_flops");
  h.fp4_flops = OptNum(o, "fp4_flops");
  h.compute_efficiency = OptNum(o, "compute_efficiency").value_or(h.compute_efficiency);
  h.bandwidth_efficiency = OptNum(o, "bandwidth_efficiency").value_or(h.bandwidth_efficiency);
  GOODPUT_ASSIGN_OR_RETURN(h.compute_efficiency_by_precision,
                           EfficiencyByPrecision(o, "compute_efficiency_by_precision", at));
  GOODPUT_ASSIGN_OR_RETURN(h.attention_efficiency_by_precision,
                           EfficiencyByPrecision(o, "attention_efficiency_by_precision", at));
  GOODPUT_ASSIGN_OR_RETURN(h.expert_efficiency_by_precision,
                           EfficiencyByPrecision(o, "expert_efficiency_by_precision", at));
  // A step's fixed cost is the serving engine's, not the card's (data/hardware/engines.json): a card entry
  // setting one would be overridden without a word.
  if (o.contains("step_overhead_s")) {
    return Status::InvalidArgument(at + ": step_overhead_s is the engine's (data/hardware/engines.json), not a card's");
  }
  h.link_bandwidth = OptNum(o, "link_bandwidth").value_or(0);
  h.link_latency_s = OptNum(o, "link_latency_s").value_or(0);
  h.kernel_latency_s = OptNum(o, "kernel_latency_s").value_or(defaults.kernel_latency_s);
  if (h.link_bandwidth < 0 || h.link_latency_s < 0 || h.kernel_latency_s < 0) {
    return Status::InvalidArgument(at + ": link figures and the kernel latency must be >= 0");
  }
  h.overlap = OptNum(o, "overlap").value_or(defaults.overlap);
  if (!(h.overlap >= 0 && h.overlap <= 1)) return Status::InvalidArgument(at + ": overlap must be in [0, 1]");
  if (!(h.compute_efficiency > 0 && h.compute_efficiency <= 1) ||
      !(h.bandwidth_efficiency > 0 && h.bandwidth_efficiency <= 1)) {
    return Status::InvalidArgument(at + ": efficiencies must be in (0, 1]");
  }
  return h;
}

}  // namespace

bool IsGpuArch(const std::string& arch) {
  const auto all = [&](size_t from, auto is) {
    return arch.size() > from && std::all_of(arch.begin() + static_cast<std::ptrdiff_t>(from), arch.end(), is);
  };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (arch.starts_with("sm")) return arch.size() >= 4 && arch.size() <= 5 && all(2, digit);
  return arch.starts_with("gfx") && arch.size() <= 8 && all(3, hex);
}

int SmVersion(const std::string& arch) {
  return IsGpuArch(arch) && arch.starts_with("sm") ? std::stoi(arch.substr(2)) : 0;
}

namespace {

std::string CatalogPath() { return DataDir() + "/hardware/gpus.json"; }

Result<json::value> ReadCatalog() {
  GOODPUT_ASSIGN_OR_RETURN(json::value doc, ReadJsonFile(CatalogPath(), "hardware catalog"));
  if (!doc.is_object() || !doc.as_object().contains("gpus") || !doc.at("gpus").is_array()) {
    return Status::InvalidArgument(CatalogPath() + ": expected an object with a \"gpus\" list");
  }
  return doc;
}

Result<CatalogDefaults> Defaults(const json::value& doc) {
  const json::value* d = doc.as_object().if_contains("defaults");
  if (!d || !d->is_object()) return Status::InvalidArgument(CatalogPath() + ": expected a \"defaults\" object");
  const std::string at = CatalogPath() + ": defaults";
  CatalogDefaults out;
  GOODPUT_ASSIGN_OR_RETURN(out.kernel_latency_s, Num(d->as_object(), "kernel_latency_s", at));
  if (out.kernel_latency_s < 0) return Status::InvalidArgument(at + ": kernel_latency_s must be >= 0");
  out.overlap = OptNum(d->as_object(), "overlap").value_or(out.overlap);
  if (!(out.overlap >= 0 && out.overlap <= 1)) return Status::InvalidArgument(at + ": overlap must be in [0, 1]");
  return out;
}

}  // namespace

Result<CatalogDefaults> LoadCatalogDefaults() {
  GOODPUT_ASSIGN_OR_RETURN(json::value doc, ReadCatalog());
  return Defaults(doc);
}

Result<std::vector<HardwareSpec>> LoadHardwareCatalog() {
  GOODPUT_ASSIGN_OR_RETURN(json::value doc, ReadCatalog());
  GOODPUT_ASSIGN_OR_RETURN(const CatalogDefaults defaults, Defaults(doc));
  std::vector<HardwareSpec> out;
  for (const auto& v : doc.at("gpus").as_array()) {
    GOODPUT_ASSIGN_OR_RETURN(HardwareSpec h, ParseGpu(v, CatalogPath(), defaults));
    out.push_back(std::move(h));
  }
  return out;
}

Result<HardwareSpec> FindGpu(const std::string& name) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<HardwareSpec> all, LoadHardwareCatalog());
  const std::string want = Lower(name);
  std::vector<std::string> known;
  for (const auto& h : all) {
    if (Lower(h.name) == want) return h;
    for (const auto& a : h.aliases) {
      if (Lower(a) == want) return h;
    }
    known.push_back(h.name);
  }
  return Status::NotFound(fmt::format("unknown GPU '{}'. Known GPUs: {} (or give --gpu-memory)", name,
                                      fmt::join(known, ", ")));
}

}  // namespace goodput

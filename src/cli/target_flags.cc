#include "cli/target_flags.h"

#include <filesystem>

#include <fmt/format.h>

#include "cli/sim_command.h"
#include "client/endpoint.h"
#include "client/http_target.h"
#include "client/server_process.h"
#include "core/text.h"

namespace goodput {

void AddTargetFlags(CLI::App& c, TargetArgs& a, bool required) {
  auto* target = c.add_option("--target,-t", a.target,
                              "URL | URL1,URL2,... (a fleet, routed by --router) | embedded | sim:GPU | sim:FILE");
  if (required) target->required();
  c.add_option("--router", a.router,
               "A fleet of URLs: which one each request goes to, as a router in front of them would send it: "
               "round-robin, least-outstanding (fewest of the client's requests in flight), prefix-affinity (a "
               "shared prompt prefix to one server, within a load bound), session (a conversation's turns, else a "
               "closed-loop client's requests, to one server)")
      ->capture_default_str();
  c.add_option("--model,-m", a.model, "Model: served name (URL), preset (embedded) or catalog name (sim)");
  c.add_option("--timeout", a.timeout, "Seconds a request may take before it counts as failed")->capture_default_str();
  c.add_option("--engine-args,--serve-args", a.engine_args,
               "Engine flags: for embedded goodput serve's (e.g. '--max-num-seqs 16'), for sim:GPU goodput sim's");
  c.add_option("--launch", a.launch,
               "URL target: the command that starts the server, with {flags} for a setting's engine flags or "
               "{value} for one varied flag's value, e.g. 'vllm serve M --port 8000 {flags}'; stopped afterwards");
  c.add_option("--launch-timeout", a.launch_timeout, "Seconds to wait for a launched server to answer")
      ->capture_default_str();
  c.add_option("--api-key", a.api_key, "Bearer token for the target");
  c.add_flag("--insecure", a.insecure, "https: accept any server certificate (self-signed test servers)");
  c.add_flag("--chat", a.chat, "Use /chat/completions (text prompts; lengths approximate) instead of /completions");
  c.add_flag("--no-fixed-length", a.no_fixed_length, "Do not send ignore_eos/min_tokens (servers without them)");
}

TargetKind KindOf(const TargetArgs& a) {
  if (a.target == "embedded") return TargetKind::kEmbedded;
  if (a.target.rfind("sim:", 0) == 0) return TargetKind::kSim;
  return TargetKind::kUrl;
}

namespace {

// --target's URLs (a comma-separated fleet) with --api-key, and --router
// checked against them.
Result<std::vector<client::Endpoint>> ParseUrls(const TargetArgs& a) {
  std::vector<client::Endpoint> out;
  for (const std::string& url : Split(a.target, ',')) {
    GOODPUT_ASSIGN_OR_RETURN(client::Endpoint e, client::ParseEndpoint(url));
    e.api_key = a.api_key;
    out.push_back(std::move(e));
  }
  GOODPUT_RETURN_IF_ERROR(client::ClientRouterFromName(a.router).status());
  return out;
}

}  // namespace

Status CheckTargetFlags(const TargetArgs& a, bool changes_settings) {
  if (!(a.timeout > 0)) return Status::InvalidArgument("--timeout must be positive");
  const TargetKind kind = KindOf(a);
  if (!a.launch.empty() && kind != TargetKind::kUrl) {
    return Status::InvalidArgument("--launch is for URL targets (embedded starts goodput serve itself)");
  }
  if (kind == TargetKind::kSim && a.model.empty()) {
    return Status::InvalidArgument("--target sim:GPU needs --model (a catalog model)");
  }
  if (kind != TargetKind::kUrl) return Status::Ok();
  GOODPUT_ASSIGN_OR_RETURN(const std::vector<client::Endpoint> urls, ParseUrls(a));
  if (urls.size() > 1 && !a.launch.empty()) {
    return Status::InvalidArgument("--launch starts one server; a fleet of URLs is started by you");
  }
  if (a.model.empty()) return Status::InvalidArgument("--target URL needs --model (the served model name)");
  const bool takes_setting =
      a.launch.find("{value}") != std::string::npos || a.launch.find("{flags}") != std::string::npos;
  if (changes_settings && !takes_setting) {
    return Status::InvalidArgument(
        "the engine is restarted per setting: use --target embedded or sim:GPU, or a URL "
        "with --launch 'COMMAND ... {flags}' (or {value} for one varied flag)");
  }
  return Status::Ok();
}

namespace {

void ReplaceAll(std::string& s, const std::string& what, const std::string& with) {
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + with.size())) {
    s.replace(at, what.size(), with);
  }
}

client::LoadOptions LoadOptionsFor(const TargetArgs& a) {
  client::LoadOptions o;
  o.model = a.model;
  o.chat = a.chat;
  o.fixed_length = !a.no_fixed_length;
  o.timeout_s = a.timeout;
  o.stop = a.stop;
  o.insecure_tls = a.insecure;
  o.shard = a.shard, o.shards = a.shards;
  o.start_at_epoch = a.start_at_epoch;
  return o;
}

}  // namespace

Result<std::string> LaunchCommand(const std::string& tmpl, const Setting& setting) {
  std::string out = tmpl;
  if (out.find("{value}") != std::string::npos) {
    if (setting.empty()) return Status::InvalidArgument("--launch has {value}, but no engine flag is varied");
    if (setting.flags.size() != 1) {
      return Status::InvalidArgument(
          fmt::format("--launch: {{value}} stands for one varied flag's value, and setting '{}' has {}; use {{flags}}",
                      setting.Label(), setting.flags.size()));
    }
    ReplaceAll(out, "{value}", setting.flags[0].value);
  }
  std::string flags;
  for (const std::string& arg : setting.Args()) flags += (flags.empty() ? "" : " ") + arg;
  ReplaceAll(out, "{flags}", flags);
  return out;
}

std::vector<std::string> SplitArgs(const std::string& s) {
  std::vector<std::string> out;
  for (const std::string& piece : Split(s, ' ')) {
    if (!piece.empty()) out.push_back(piece);
  }
  return out;
}

Result<std::unique_ptr<Target>> MakeTarget(const TargetArgs& a, const Setting& setting) {
  client::LoadOptions o = LoadOptionsFor(a);
  std::vector<std::string> engine_args = SplitArgs(a.engine_args);
  for (const std::string& arg : setting.Args()) engine_args.push_back(arg);
  switch (KindOf(a)) {
    case TargetKind::kEmbedded: {
      const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
      GOODPUT_ASSIGN_OR_RETURN(
          auto t, EmbeddedTarget::Start(self, a.model.empty() ? "goodput-small" : a.model, engine_args, o));
      return std::unique_ptr<Target>(std::move(t));
    }
    case TargetKind::kSim:
      return MakeSimTarget(a.model, a.target.substr(4), engine_args);
    case TargetKind::kUrl:
      break;
  }
  GOODPUT_ASSIGN_OR_RETURN(std::vector<client::Endpoint> urls, ParseUrls(a));
  o.endpoint = urls[0];
  o.more_endpoints.assign(urls.begin() + 1, urls.end());
  GOODPUT_ASSIGN_OR_RETURN(o.router, client::ClientRouterFromName(a.router));
  if (a.launch.empty()) return std::unique_ptr<Target>(std::make_unique<HttpTarget>(o));
  GOODPUT_ASSIGN_OR_RETURN(const std::string command, LaunchCommand(a.launch, setting));
  GOODPUT_ASSIGN_OR_RETURN(auto t, LaunchedTarget::Start(command, o, a.launch_timeout));
  return std::unique_ptr<Target>(std::move(t));
}

}  // namespace goodput

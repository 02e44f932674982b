// A tuned setting spelled for the engine that will serve it. The settings
// goodput searches on the simulator are goodput sim's flags, which take
// vLLM's names; a user serving with SGLang pastes SGLang's.
#pragma once

#include <string>
#include <vector>

#include "measure/measurement.h"

namespace goodput {

// How an engine starts with a setting: its command, the arguments and the
// same as keys of the engine's --config YAML file (vLLM and SGLang both read
// one), and notes for what the engine spells otherwise or does not have.
struct ServeFlags {
  std::string command;            // "vllm serve", "python -m sglang.launch_server"; "" when none is known
  std::vector<std::string> args;  // {"--max-num-seqs", "16", ...}
  std::vector<std::string> yaml;  // {"max-num-seqs: 16", ...}
  std::vector<std::string> notes;
};

// `s` spelled for `engine`, an engines catalog name (data/hardware/engines.json):
// vllm and vllm-v0 (and "" or none: the simulator's own flags are vLLM's)
// give vLLM's flags, sglang SGLang's (server_args.py: --max-running-requests,
// --chunked-prefill-size, ...), with a note for each flag it does not map
// rather than a wrong one; trtllm and trtllm-cpp give no command and no
// arguments, only a note saying so.
ServeFlags ServeFlagsFor(const Setting& s, const std::string& engine);

// The command that starts `engine` with such flags ("vllm serve", SGLang's
// launch_server), or "" where goodput does not spell its flags (TensorRT-LLM).
std::string ServeCommand(const std::string& engine);

// The engine a sim target's flags name with --engine (its last one), or "vllm".
std::string EngineOfSimArgs(const std::vector<std::string>& args);

}  // namespace goodput

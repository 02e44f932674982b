#include "workload/workload.h"

#include <gtest/gtest.h>

#include "core/data_dir.h"

namespace goodput {
namespace {

TEST(Workload, ShippedExamplesLoad) {
  for (const char* name : {"chat", "long-context", "mixed"}) {
    auto w = LoadWorkload(DataDir() + "/workloads/" + name + ".yaml");
    ASSERT_TRUE(w.ok()) << name << ": " << w.status().message();
    EXPECT_EQ(w->name, name);
  }
}

// The shipped length distributions against the figures their sources
// publish, not against the files they were derived from: the vLLM paper's
// ShareGPT means (161.31 prompt, 337.99 output tokens; the quantiles'
// linear segments move the prompt's mean up by about 3%), Splitwise's
// medians for the Azure code (about 1,500 and 13) and conversation (1,020
// and 129) traces, and Vidur's arXiv file's 4,096-token cap.
TEST(Workload, ShippedLengthDistributionsMatchTheirSources) {
  const auto load = [](const std::string& name) {
    auto w = LoadWorkload(DataDir() + "/workloads/" + name + ".yaml");
    EXPECT_TRUE(w.ok()) << name << ": " << w.status().message();
    EXPECT_EQ(w->name, name);
    return w->classes.at(0);
  };
  const RequestClass chat = load("chat-sharegpt");
  EXPECT_NEAR(chat.prompt.Mean() / 161.31, 1, 0.04);
  EXPECT_NEAR(chat.output.Mean() / 337.99, 1, 0.02);
  const RequestClass code = load("code-azure");
  EXPECT_NEAR(code.prompt.Quantile(0.5) / 1500.0, 1, 0.03);
  EXPECT_NEAR(code.output.Quantile(0.5), 13, 1);
  const RequestClass conv = load("conversation-azure");
  EXPECT_NEAR(conv.prompt.Quantile(0.5), 1020, 10);
  EXPECT_NEAR(conv.output.Quantile(0.5), 129, 2);
  const RequestClass arxiv = load("summarization-arxiv");
  EXPECT_LE(arxiv.prompt.Max(), 4096);
  EXPECT_LE(arxiv.output.Max(), 4096);
  EXPECT_GT(arxiv.prompt.Quantile(0.5), 10 * arxiv.output.Quantile(0.5));  // documents in, summaries out
}

// arrival.think: a duration, 0 or a range ("0-30ms" takes the end's unit);
// anything else (a bare number, more than an hour) is one clear error naming
// the line.
TEST(Workload, ClosedLoopThinkTime) {
  const auto parse = [](const std::string& think) {
    return ParseWorkload("requests: 10\narrival:\n  type: closed\n  think: " + think +
                             "\nclasses:\n  - name: c\n    prompt: fixed:8\n    output: fixed:4\n",
                         "w.yaml", ".");
  };
  auto range = parse("0-30ms");
  ASSERT_TRUE(range.ok()) << range.status().message();
  EXPECT_EQ(range->client_think.min_s, 0);
  EXPECT_DOUBLE_EQ(range->client_think.max_s, 0.03);
  auto fixed = parse("2s");
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_EQ(fixed->client_think.min_s, 2);
  EXPECT_EQ(fixed->client_think.max_s, 2);
  auto units = parse("10ms-1s");
  ASSERT_TRUE(units.ok()) << units.status().message();
  EXPECT_DOUBLE_EQ(units->client_think.min_s, 0.01);
  auto zero = parse("0");
  ASSERT_TRUE(zero.ok()) << zero.status().message();
  EXPECT_FALSE(zero->client_think.any());
  for (const char* bad : {"soon", "30ms-10ms", "-5ms", "2h", "5ms-", "ms-5ms", "5", "0-5"}) {
    auto r = parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("w.yaml:4: 'think' must be a duration or a range"), std::string::npos)
        << bad << ": " << r.status().message();
  }
  auto none =
      ParseWorkload("requests: 10\nclasses:\n  - name: c\n    prompt: fixed:8\n    output: fixed:4\n", "w.yaml", ".");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->client_think.any());
}

// No request of a workload may be longer than 16M tokens (kMaxTokenLength):
// a prefix, a prompt, or a conversation's last turn with its whole history.
TEST(Workload, RequestsBeyondTheTokenLimitAreOneError) {
  const auto parse = [](const std::string& body) {
    return ParseWorkload("requests: 10\nclasses:\n  - name: c\n" + body, "w.yaml", ".");
  };
  auto prefix = parse("    prefix: 99999999999\n    prompt: fixed:8\n    output: fixed:4\n");
  ASSERT_FALSE(prefix.ok());
  EXPECT_NE(prefix.status().message().find("w.yaml:4: class 'c': 'prefix' may be at most 16777216 tokens"),
            std::string::npos)
      << prefix.status().message();
  auto history = parse("    session: {turns: fixed:1000}\n    prompt: fixed:10k\n    output: fixed:10k\n");
  ASSERT_FALSE(history.ok());  // the 1000th turn: 1000 x 10k + 999 x 10k = 19.99M tokens
  EXPECT_NE(history.status().message().find("would be 19990000 tokens, over the limit"), std::string::npos)
      << history.status().message();
  auto both = parse("    prefix: 1\n    prompt: fixed:16M\n    output: fixed:4\n");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("would be 16777217 tokens"), std::string::npos) << both.status().message();
  EXPECT_TRUE(parse("    session: {turns: fixed:800}\n    prompt: fixed:10k\n    output: fixed:10k\n").ok());
}

TEST(Workload, ChatExample) {
  auto w = LoadWorkload(DataDir() + "/workloads/chat.yaml");
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->classes.size(), 1u);
  const RequestClass& c = w->classes[0];
  ASSERT_TRUE(c.slo.has_value());
  EXPECT_DOUBLE_EQ(c.slo->targets[1].threshold_s, 0.1);
  EXPECT_NEAR(c.prompt.Mean(), 1000, 5);
  EXPECT_EQ(w->arrival.kind, ArrivalKind::kClosedLoop);
  EXPECT_EQ(w->arrival.concurrency, 32);
  EXPECT_DOUBLE_EQ(w->warmup.fraction, 0.1);
}

TEST(Workload, LongContextMatchesTheSourceTraffic) {
  auto w = LoadWorkload(DataDir() + "/workloads/long-context.yaml");
  ASSERT_TRUE(w.ok());
  const LengthDistribution& p = w->classes[0].prompt;
  EXPECT_LE(p.Quantile(0.699), 200000);
  EXPECT_GT(p.Quantile(0.701), 200000);
  EXPECT_LE(p.Max(), 500000);
}

TEST(Workload, MixedHasAnOfflineClassWithItsOwnClients) {
  auto w = LoadWorkload(DataDir() + "/workloads/mixed.yaml");
  ASSERT_TRUE(w.ok());
  const RequestClass& off = w->classes[1];
  EXPECT_TRUE(off.offline);
  EXPECT_FALSE(off.slo.has_value());
  EXPECT_EQ(*off.concurrency, 16);
  EXPECT_EQ(w->Slo().classes.size(), 1u);
}

Status ParseError(const std::string& yaml) {
  auto w = ParseWorkload(yaml, "w.yaml", ".");
  return w.ok() ? Status::Ok() : w.status();
}

void ExpectError(const std::string& yaml, const std::string& needle) {
  Status st = ParseError(yaml);
  ASSERT_FALSE(st.ok()) << yaml;
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
}

TEST(Workload, BrokenFilesNameTheProblem) {
  ExpectError("classes: [", "not valid YAML");
  ExpectError("name: x", "'classes' must list");
  ExpectError("classes:\n  - name: a\n    output: fixed:10\n", "class needs 'prompt'");
  ExpectError("classes:\n  - name: a\n    prompt: normal:10,-1\n    output: fixed:10\n",
              "w.yaml:3: class 'a': 'prompt'");
  ExpectError("classes:\n  - name: a\n    prompt: fixed:10\n    output: fixed:10\n    slo: ttft p99 <= 1\n",
              "no unit");
  ExpectError("classes:\n  - name: a\n    prompt: fixed:10\n    output: fixed:10\n  - name: a\n    prompt: fixed:1\n"
              "    output: fixed:1\n",
              "appears twice");
  ExpectError("arrival:\n  type: bursty\nclasses:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n",
              "unknown arrival type 'bursty'");
  ExpectError("arrival:\n  rate: -3\nclasses:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n",
              "w.yaml:2: 'rate' must be 0.0001 to 1e+06 requests/s");
  ExpectError("warmup: 60%\ncooldown: 50%\nclasses:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n",
              "leave nothing to measure");
  ExpectError("classes:\n  - name: a\n    offline: true\n    prompt: fixed:1\n    output: fixed:1\n"
              "    slo: ttft p99 <= 1s\n",
              "offline class has no SLO");
  ExpectError("arrival:\n  type: trace\nclasses:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n",
              "needs 'file'");
  ExpectError("classes:\n  - name: a\n    prefix: {groups: 2}\n    prompt: fixed:1\n    output: fixed:1\n",
              "'prefix' needs 'tokens'");
  ExpectError("classes:\n  - name: a\n    prefix: 0\n    prompt: fixed:1\n    output: fixed:1\n", "must be positive");
  ExpectError("classes:\n  - name: a\n    prefix: lots\n    prompt: fixed:1\n    output: fixed:1\n", "prefix tokens");
}

// Input that crashed, hung or ate memory before: each is one clear error.
TEST(Workload, OutOfRangeAndMisshapenInputIsRefused) {
  const std::string cls = "classes:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n";
  ExpectError("arrival: closed\n" + cls, "w.yaml:1: 'arrival' must be a mapping");
  ExpectError("arrival: [1, 2]\n" + cls, "w.yaml:1: 'arrival' must be a mapping");
  ExpectError("requests: 1000000000000000000\n" + cls, "'requests' must be 1 to 1000000");
  ExpectError("requests: 1e18\n" + cls, "'requests' must be");
  ExpectError("arrival: {concurrency: 2147483647}\n" + cls, "'concurrency' must be 1 to 100000");
  ExpectError("arrival: {type: poisson, rate: 1e-300}\n" + cls, "'rate' must be 0.0001 to 1e+06");
  ExpectError("arrival: {type: poisson, rate: .nan}\n" + cls, "'rate' must be");
  ExpectError("arrival: {type: gamma, rate: 1, burstiness: 1e9}\n" + cls, "'burstiness' must be 0.001 to 10000");
  ExpectError("classes:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n  - name: ghost\n    share: 0\n"
              "    prompt: fixed:1\n    output: fixed:1\n",
              "w.yaml:6: class 'ghost': 'share' is 0: the class would never get a request");
  ExpectError("classes:\n  - name: a\n    concurrency: 0\n    prompt: fixed:1\n    output: fixed:1\n",
              "class 'a': 'concurrency' must be 1 to 100000");
  ExpectError("classes:\n  - name: a\n    prompt: {file: /dev/zero}\n    output: fixed:1\n",
              "lengths file '/dev/zero' is larger than 64 MiB");
  ExpectError("arrival: {type: trace, file: /dev/zero}\n" + cls, "trace '/dev/zero' is larger than 64 MiB");
  ExpectError("arrival: {type: trace, file: t.csv, skip_empty: maybe}\n" + cls, "skip_empty");
  // A class with its own clients needs no share.
  EXPECT_TRUE(ParseWorkload("classes:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n  - name: b\n"
                            "    share: 0\n    concurrency: 2\n    prompt: fixed:1\n    output: fixed:1\n",
                            "w.yaml", ".")
                  .ok());
}

TEST(Workload, SharedPrefixInBothSpellings) {
  auto short_form = ParseWorkload("classes:\n  - name: a\n    prefix: 512\n    prompt: fixed:10\n    output: fixed:1\n",
                                  "w.yaml", ".");
  ASSERT_TRUE(short_form.ok()) << short_form.status().message();
  EXPECT_EQ(short_form->classes[0].prefix_tokens, 512);
  EXPECT_EQ(short_form->classes[0].prefix_groups, 1);
  auto long_form = ParseWorkload(
      "classes:\n  - name: a\n    prefix: {tokens: 64, groups: 4}\n    prompt: fixed:10\n    output: fixed:1\n",
      "w.yaml", ".");
  ASSERT_TRUE(long_form.ok()) << long_form.status().message();
  EXPECT_EQ(long_form->classes[0].prefix_tokens, 64);
  EXPECT_EQ(long_form->classes[0].prefix_groups, 4);
}

TEST(Workload, ApplySloChecksClassNames) {
  auto w = LoadWorkload(DataDir() + "/workloads/mixed.yaml");
  ASSERT_TRUE(w.ok());
  auto bad = ParseSlo("chatty: ttft p99 <= 1s");
  Status st = ApplySlo(*w, *bad);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("classes: interactive, offline"), std::string::npos);
  auto all = ParseSlo("ttft p90 <= 2s");
  ASSERT_TRUE(ApplySlo(*w, *all).ok());
  EXPECT_DOUBLE_EQ(w->classes[0].slo->targets[0].threshold_s, 2.0);
  EXPECT_FALSE(w->classes[1].slo.has_value());  // offline stays without an SLO
}

}  // namespace
}  // namespace goodput

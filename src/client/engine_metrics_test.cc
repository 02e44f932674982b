#include "client/engine_metrics.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace goodput::client {
namespace {

TEST(PrometheusCounter, SumsEverySeriesOfTheName) {
  const std::string page =
      "# HELP vllm:num_preemptions_total Preemptions.\n"
      "# TYPE vllm:num_preemptions_total counter\n"
      "vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 3.0\n"
      "vllm:num_preemptions_total{engine=\"1\",model_name=\"a b}\"} 4\n"
      "vllm:num_preemptions_total_created{engine=\"0\"} 1.7e9\n"
      "vllm:num_preemptions_totally 9\n"
      "other 5\n";
  EXPECT_EQ(PrometheusCounter(page, "vllm:num_preemptions_total"), 7.0);
  EXPECT_EQ(PrometheusCounter("plain 2 1700000000\n", "plain"), 2.0);  // with a timestamp
  EXPECT_EQ(PrometheusCounter(page, "vllm:absent"), std::nullopt);
  EXPECT_EQ(PrometheusCounter("broken{ 3\nbroken{a=\"1\"} x\n", "broken"), std::nullopt);
  EXPECT_EQ(PrometheusCounter("", "x"), std::nullopt);
}

// vLLM's speculative decoding counters (one series per engine, labelled),
// taken before and after a run: 40 drafts of 8 tokens with 96 kept are
// vLLM's acceptance 0.30 and mean acceptance length 1 + 96 / 40 = 3.4.
TEST(CountersBetween, SpeculativeDecodingInVllmsTerms) {
  const EngineMetrics before = ParseEngineMetrics(
      "# TYPE vllm:spec_decode_num_drafts_total counter\n"
      "vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 10\n"
      "vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 80\n"
      "vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 20\n"
      "vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",position=\"0\"} 9\n"
      "vllm:num_preemptions_total{engine=\"0\"} 3\n");
  const EngineMetrics after = ParseEngineMetrics(
      "vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 50\n"
      "vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 400\n"
      "vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 116\n"
      "vllm:num_preemptions_total{engine=\"0\"} 5\n");
  const EngineCounters c = CountersBetween(before, after);
  ASSERT_TRUE(c.spec_decode.has_value());
  EXPECT_DOUBLE_EQ(c.spec_decode->acceptance(), 96.0 / 320.0);
  EXPECT_DOUBLE_EQ(c.spec_decode->mean_acceptance_length(), 1 + 96.0 / 40.0);
  EXPECT_EQ(*c.preemptions, 2);
  // Without the counters, or without a draft in between: no figure.
  EXPECT_FALSE(CountersBetween(ParseEngineMetrics(""), after).spec_decode.has_value());
  EXPECT_FALSE(CountersBetween(after, after).spec_decode.has_value());
}

// vLLM's prefix cache counters (tokens): 3,000 looked up and 1,200 found
// between the scrapes is a 40% hit rate; none looked up is no figure.
TEST(CountersBetween, PrefixCacheInVllmsTerms) {
  const EngineMetrics before = ParseEngineMetrics(
      "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1000\n"
      "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 100\n");
  const EngineMetrics after = ParseEngineMetrics(
      "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 4000\n"
      "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 1300\n");
  const EngineCounters c = CountersBetween(before, after);
  ASSERT_TRUE(c.prefix_cache.has_value());
  EXPECT_DOUBLE_EQ(c.prefix_cache->queries, 3000);
  EXPECT_DOUBLE_EQ(c.prefix_cache->hit_rate(), 0.4);
  EXPECT_FALSE(CountersBetween(after, after).prefix_cache.has_value());
  EXPECT_FALSE(CountersBetween(ParseEngineMetrics("garbage{\n"), after).prefix_cache.has_value());
}

// A fleet's counters: preemptions and the prefix cache summed over the
// endpoints, each endpoint's requests and prefix cache kept apart; one
// endpoint without a preemption counter makes the fleet's unknown.
TEST(FleetCountersBetween, SumsTheEndpointsAndKeepsEachOne) {
  const auto page = [](int preempted, int queries, int hits) {
    return ParseEngineMetrics(
        fmt::format("vllm:num_preemptions_total{{engine=\"0\"}} {}\n"
                    "vllm:prefix_cache_queries_total{{engine=\"0\"}} {}\n"
                    "vllm:prefix_cache_hits_total{{engine=\"0\"}} {}\n",
                    preempted, queries, hits));
  };
  const EngineCounters c =
      FleetCountersBetween({page(1, 0, 0), page(0, 100, 0)}, {page(3, 1000, 500), page(1, 600, 100)}, {30, 10});
  EXPECT_EQ(c.preemptions, 3);
  ASSERT_TRUE(c.prefix_cache.has_value());
  EXPECT_DOUBLE_EQ(c.prefix_cache->queries, 1500);
  EXPECT_DOUBLE_EQ(c.prefix_cache->hits, 600);
  ASSERT_EQ(c.replicas.size(), 2u);
  EXPECT_DOUBLE_EQ(c.replicas[0].requests, 30);
  EXPECT_DOUBLE_EQ(c.replicas[0].prefix_cache.hit_rate(), 0.5);
  EXPECT_DOUBLE_EQ(c.replicas[1].prefix_cache.hit_rate(), 0.2);
  const EngineCounters blind =
      FleetCountersBetween({page(1, 0, 0), ParseEngineMetrics("")}, {page(3, 0, 0), ParseEngineMetrics("")}, {5, 5});
  EXPECT_FALSE(blind.preemptions.has_value());
  EXPECT_TRUE(FleetCountersBetween({page(1, 0, 0)}, {page(2, 0, 0)}, {9}).replicas.empty());  // one endpoint
}

TEST(ScrapeEngineMetrics, NoServerMeansNoFigures) {
  Endpoint e;
  e.port = 9;  // discard: nothing listens on loopback
  EXPECT_FALSE(ScrapeEngineMetrics(e).preemptions.has_value());
}

}  // namespace
}  // namespace goodput::client

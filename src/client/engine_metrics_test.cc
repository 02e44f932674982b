#include "client/engine_metrics.h"

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

TEST(ScrapeEngineMetrics, NoServerMeansNoFigures) {
  Endpoint e;
  e.port = 9;  // discard: nothing listens on loopback
  EXPECT_FALSE(ScrapeEngineMetrics(e).preemptions.has_value());
}

}  // namespace
}  // namespace goodput::client

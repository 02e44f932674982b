#include "workload/trace.h"

#include <gtest/gtest.h>

#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::WriteTempFile;

TEST(Trace, GenericCsvWithClass) {
  auto t = ReadTrace(
      WriteTempFile("t.csv", "timestamp,input_length,output_length,class\n10.0,100,20,chat\n10.5,200,30,batch\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_DOUBLE_EQ((*t)[0].t, 0.0);
  EXPECT_DOUBLE_EQ((*t)[1].t, 0.5);
  EXPECT_EQ((*t)[1].input_tokens, 200);
  EXPECT_EQ((*t)[1].request_class, "batch");
}

// The public Azure LLM inference trace's columns and date-time format.
TEST(Trace, AzureColumns) {
  auto t = ReadTrace(WriteTempFile("azure.csv",
                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                           "2023-11-16 18:15:46.6805900,374,44\n"
                           "2023-11-16 18:15:50.9951690,396,109\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_NEAR((*t)[1].t, 4.314579, 1e-6);
  EXPECT_EQ((*t)[0].input_tokens, 374);
  EXPECT_EQ((*t)[1].output_tokens, 109);
}

// Mooncake's JSONL: millisecond timestamps, extra fields ignored.
TEST(Trace, MooncakeJsonl) {
  auto t = ReadTrace(WriteTempFile("mooncake.jsonl",
                           "{\"timestamp\": 0, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [1, 2]}\n"
                           "{\"timestamp\": 1500, \"input_length\": 100, \"output_length\": 10}\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ((*t)[1].t, 1.5);
  EXPECT_EQ((*t)[0].input_tokens, 6955);
}

TEST(Trace, BrokenTracesNameTheLine) {
  auto missing = ReadTrace(WriteTempFile("m.csv", "time,prompt\n1,2\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("needs a timestamp, an input-length and an output-length"),
            std::string::npos);
  auto backwards = ReadTrace(WriteTempFile("b.csv", "timestamp,input_length,output_length\n5,1,1\n4,1,1\n"));
  ASSERT_FALSE(backwards.ok());
  EXPECT_NE(backwards.status().message().find("go backwards at request 2"), std::string::npos);
  auto junk = ReadTrace(WriteTempFile("j.csv", "timestamp,input_length,output_length\n1,abc,1\n"));
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find(":2: malformed row"), std::string::npos);
  auto jsonl = ReadTrace(WriteTempFile("j.jsonl", "{\"timestamp\": 0, \"input_length\": 5}\n"));
  ASSERT_FALSE(jsonl.ok());
  EXPECT_NE(jsonl.status().message().find(":1: needs numeric"), std::string::npos);
  EXPECT_FALSE(ReadTrace("/nonexistent.csv").ok());
  // A length beyond 16M tokens (or past int64 in the CSV) is an error naming the request, not a crash.
  auto huge =
      ReadTrace(WriteTempFile("h.csv", "timestamp,input_length,output_length\n0,5,1\n1,99999999999999999999,1\n"));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("request 2 has a length over the limit of 16777216"), std::string::npos)
      << huge.status().message();
  // A year and more between the first arrival and the last is a typo (a replay would wait it out).
  auto span = ReadTrace(WriteTempFile("s.csv", "timestamp,input_length,output_length\n0,5,1\n1e300,5,1\n"));
  ASSERT_FALSE(span.ok());
  EXPECT_NE(span.status().message().find("the trace spans 1e+300 s, more than a year"), std::string::npos)
      << span.status().message();
  EXPECT_TRUE(ReadTrace(WriteTempFile("y.csv", "timestamp,input_length,output_length\n0,5,1\n31000000,5,1\n")).ok());
  auto huge_jsonl =
      ReadTrace(WriteTempFile("h.jsonl", "{\"timestamp\": 0, \"input_length\": 1e300, \"output_length\": 5}\n"));
  ASSERT_FALSE(huge_jsonl.ok());
  EXPECT_NE(huge_jsonl.status().message().find(":1: a length over the limit"), std::string::npos)
      << huge_jsonl.status().message();
}

}  // namespace
}  // namespace goodput

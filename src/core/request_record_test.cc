#include "core/request_record.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// Chunk times keep every bit through their text; text that is not chunks
// reads as none.
TEST(ChunksText, RoundTripsAndRefusesOtherText) {
  const std::vector<TokenChunk> chunks = {{0.1, 1}, {1.0 / 3.0, 2}, {1234.5678901234567, 7}};
  const std::string text = ChunksToText(chunks);
  const std::vector<TokenChunk> back = ChunksFromText(text);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back[i].t, chunks[i].t) << text;
    EXPECT_EQ(back[i].tokens, chunks[i].tokens);
  }
  EXPECT_EQ(ChunksToText({}), "");
  EXPECT_TRUE(ChunksFromText("").empty());
  for (const char* bad : {"0.5", "0.5:", "x:1", "0.5:1 junk", "0.5:-2", "0.5:1x"}) {
    EXPECT_TRUE(ChunksFromText(bad).empty()) << bad;
  }
}

}  // namespace
}  // namespace goodput

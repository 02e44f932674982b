#include "model/tokenizer.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace goodput {
namespace {

TEST(ByteTokenizer, RoundTripsBytes) {
  ByteTokenizer t;
  const std::string text = "h\xc3\xa9llo\n\x01";
  auto ids = t.Encode(text);
  EXPECT_EQ(ids.size(), text.size());
  EXPECT_EQ(ids[0], 3 + 'h');
  EXPECT_EQ(t.Decode(ids), text);
  EXPECT_EQ(t.Decode({1, 3 + 'a', 2}), "a");  // BOS/EOS are not text
}

// A byte-level BPE: the 256 byte characters ("Ġ" stands for the space),
// plus merges ranked "h e" < "he l" < "l o" < "Ġ w".
std::unique_ptr<BpeTokenizer> TinyBpe() {
  boost::json::object vocab;
  int id = 0;
  for (const auto& c : ByteLevelAlphabet()) vocab[c] = id++;
  for (const char* t : {"he", "hel", "lo", "\xc4\xa0w"}) vocab[t] = id++;
  boost::json::array merges{"h e", "he l", "l o", "\xc4\xa0 w"};
  boost::json::object doc{{"model", boost::json::object{{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
                          {"added_tokens", boost::json::array{boost::json::object{
                                               {"id", id}, {"content", "<|endoftext|>"}, {"special", true}}}}};
  auto t = BpeTokenizer::Parse(boost::json::serialize(doc), "test");
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(*t);
}

TEST(BpeTokenizer, MergesByRankWithinWords) {
  auto t = TinyBpe();
  // Words "hello" and " world". "hello": h e l l o -> he l l o -> hel l o -> hel lo
  // (rank 0, then 1, then 2). " world": Ġ w o r l d -> Ġw o r l d.
  auto ids = t->Encode("hello world");
  ASSERT_EQ(ids.size(), 7u);
  EXPECT_EQ(t->Decode({ids[0]}), "hel");
  EXPECT_EQ(t->Decode({ids[1]}), "lo");
  EXPECT_EQ(t->Decode({ids[2]}), " w");
  EXPECT_EQ(t->Decode(ids), "hello world");
}

TEST(BpeTokenizer, SpecialTokensAreNotText) {
  auto t = TinyBpe();
  EXPECT_GE(t->eos_id(), 0);
  EXPECT_EQ(t->Decode({t->eos_id()}), "");
  EXPECT_EQ(t->vocab_size(), t->eos_id() + 1);
}

TEST(BpeTokenizer, SpacesAttachToTheNextWord) {
  auto t = TinyBpe();
  EXPECT_EQ(t->Decode(t->Encode("a  b\n\nc")), "a  b\n\nc");
  EXPECT_EQ(t->Decode(t->Encode("it's 42!")), "it's 42!");
}

TEST(BpeTokenizer, BrokenFilesSayWhat) {
  EXPECT_FALSE(BpeTokenizer::Parse("{", "t").ok());
  auto no_merges = BpeTokenizer::Parse(R"({"model": {"vocab": {}}})", "t");
  ASSERT_FALSE(no_merges.ok());
  EXPECT_NE(no_merges.status().message().find("model.merges"), std::string::npos);
  auto not_bytes = BpeTokenizer::Parse(R"({"model": {"vocab": {"a": 0}, "merges": []}})", "t");
  ASSERT_FALSE(not_bytes.ok());
  EXPECT_NE(not_bytes.status().message().find("not a byte-level BPE"), std::string::npos);
  auto unigram = BpeTokenizer::Parse(R"({"model": {"type": "Unigram", "vocab": {}, "merges": []}})", "t");
  ASSERT_FALSE(unigram.ok());
  EXPECT_NE(unigram.status().message().find("not BPE"), std::string::npos);
  EXPECT_FALSE(BpeTokenizer::Load("/nonexistent/tokenizer.json").ok());
}

TEST(Utf8, HoldsBackAnIncompleteCharacter) {
  const std::string e_acute = "\xc3\xa9";
  EXPECT_EQ(CompleteUtf8Prefix("ab"), 2u);
  EXPECT_EQ(CompleteUtf8Prefix("a" + e_acute), 3u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xc3"), 1u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xe2\x82"), 1u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xe2\x82\xac"), 4u);
}

}  // namespace
}  // namespace goodput

#include "server/generation.h"

#include <gtest/gtest.h>

namespace goodput::server {
namespace {

std::vector<int32_t> Ids(const std::string& s) { return ByteTokenizer().Encode(s); }

TEST(TextStream, StopStringCutsTheText) {
  ByteTokenizer tok;
  TextStream t(tok, {"END"});
  std::string out = t.Append(Ids("hello E"));
  EXPECT_EQ(out, "hello ");  // "E" could start the stop string: held back
  out += t.Append(Ids("N"));
  out += t.Append(Ids("D and more"));
  EXPECT_TRUE(t.stopped());
  EXPECT_EQ(out + t.Finish(), "hello ");
}

TEST(TextStream, HeldBackTextThatIsNotAStopComesOut) {
  ByteTokenizer tok;
  TextStream t(tok, {"END"});
  std::string out = t.Append(Ids("EN"));
  out += t.Append(Ids("X"));
  EXPECT_EQ(out + t.Finish(), "ENX");
  EXPECT_FALSE(t.stopped());
}

TEST(TextStream, IncompleteUtf8WaitsForItsLastByte) {
  ByteTokenizer tok;
  TextStream t(tok, {});
  EXPECT_EQ(t.Append(Ids("a\xc3")), "a");
  EXPECT_EQ(t.Append(Ids("\xa9")), "\xc3\xa9");
  EXPECT_EQ(t.Append(Ids("\xe2\x82")), "");
  EXPECT_EQ(t.Finish(), "\xef\xbf\xbd");  // cut off mid-character at the end
}

TEST(Utf8, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(SanitizeUtf8("ok"), "ok");
  EXPECT_EQ(SanitizeUtf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(SanitizeUtf8("\xc3" "a"), "\xef\xbf\xbd" "a");
  EXPECT_EQ(SanitizeUtf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");  // overlong
}

TEST(PromptIds, TextGetsBosAndTooLongIsRefused) {
  ByteTokenizer tok;
  ServedModel m{"m", 8, &tok, {"offline"}};
  GenerationRequest r;
  r.prompt_text = "abc";
  auto ids = std::get<std::vector<int32_t>>(PromptIds(r, m));
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 3 + 'a', 3 + 'b', 3 + 'c'}));
  r.prompt_text = "abcdefgh";
  auto err = std::get<ApiError>(PromptIds(r, m));
  EXPECT_NE(err.message.find("maximum context length is 8 tokens"), std::string::npos);
  GenerationRequest ids_req;
  ids_req.prompt_ids = {5, 400};
  EXPECT_NE(std::get<ApiError>(PromptIds(ids_req, m)).message.find("token id 400"), std::string::npos);
  GenerationRequest chat;
  chat.chat = true;
  chat.messages = {{"user", "hi"}};
  EXPECT_EQ(ApplyChatTemplate(chat.messages), "<|user|>\nhi\n<|assistant|>\n");
}

}  // namespace
}  // namespace goodput::server

#include "client/endpoint.h"

#include <gtest/gtest.h>

namespace goodput::client {
namespace {

TEST(Endpoint, ParsesHostPortAndPrefix) {
  auto e = ParseEndpoint("http://127.0.0.1:8000");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 8000);
  EXPECT_EQ(e->api_prefix, "/v1");
  e = ParseEndpoint("http://localhost:9000/openai/v1/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->api_prefix, "/openai/v1");
  e = ParseEndpoint("http://example");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->port, 80);
  EXPECT_EQ(e->Url(), "http://example:80/v1");
  e = ParseEndpoint("https://api.example.com/v1");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->tls);
  EXPECT_EQ(e->port, 443);
  EXPECT_EQ(e->Url(), "https://api.example.com:443/v1");
}

TEST(Endpoint, RefusesWhatItCannotUse) {
  for (const char* bad : {"", "localhost:8000", "ftp://h/", "http://u:p@h:1/",
                          "http://h:1/v1?x=1", "http://h:0", "http:// bad"}) {
    auto e = ParseEndpoint(bad);
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) {
      EXPECT_FALSE(e.status().message().empty());
    }
  }
  EXPECT_NE(ParseEndpoint("ftp://x:1").status().message().find("only http:// and https://"), std::string::npos);
  // Past 65535 a port once wrapped into another (99999 -> 34463) and bench sent there.
  for (const char* bad : {"http://127.0.0.1:99999", "http://127.0.0.1:65536", "http://h:4294967297"}) {
    auto e = ParseEndpoint(bad);
    ASSERT_FALSE(e.ok()) << bad << " -> " << e->Url();
    EXPECT_NE(e.status().message().find("bad port"), std::string::npos) << e.status().message();
  }
  EXPECT_EQ(ParseEndpoint("http://h:65535")->port, 65535);
}

}  // namespace
}  // namespace goodput::client

#include "client/endpoint.h"

#include <boost/url/parse.hpp>
#include <fmt/format.h>

namespace goodput::client {

std::string Endpoint::Url() const { return fmt::format("{}://{}:{}{}", tls ? "https" : "http", host, port, api_prefix); }

Result<Endpoint> ParseEndpoint(const std::string& url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return Status::InvalidArgument("'" + url + "' is not a URL (expected http://HOST:PORT[/v1])");
  const boost::urls::url_view u = *parsed;
  if (u.scheme() != "http" && u.scheme() != "https") {
    return Status::InvalidArgument("'" + url + "': only http:// and https:// URLs are supported");
  }
  if (u.has_userinfo() || u.has_query() || u.has_fragment() || u.host().empty()) {
    return Status::InvalidArgument("'" + url + "': expected http://HOST:PORT[/PREFIX] without user, query or fragment");
  }
  Endpoint e;
  e.tls = u.scheme() == "https";
  e.port = e.tls ? 443 : 80;
  e.host = std::string(u.host());
  if (u.has_port()) {
    if (u.port_number() == 0) return Status::InvalidArgument("'" + url + "': bad port");
    e.port = u.port_number();
  }
  std::string path(u.path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (!path.empty()) e.api_prefix = path;
  return e;
}

}  // namespace goodput::client

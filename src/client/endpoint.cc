#include "client/endpoint.h"

#include <chrono>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>
#include <fmt/format.h>

#include "core/text.h"

namespace goodput::client {

std::string Endpoint::Url() const {
  return fmt::format("{}://{}:{}{}", tls ? "https" : "http", host, port, api_prefix);
}

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
    // Read from the text: port_number() wraps a port past 65535 into a valid one.
    const std::string port(u.port());
    const std::optional<int64_t> value = ParseWholeNumber(port);
    if (!value || *value < 1 || *value > 65535) {
      return Status::InvalidArgument("'" + url + "': bad port '" + port + "' (1 to 65535)");
    }
    e.port = static_cast<uint16_t>(*value);
  }
  std::string path(u.path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (!path.empty()) e.api_prefix = path;
  return e;
}

Result<std::string> HttpGet(const Endpoint& e, const std::string& path, double timeout_s) {
  namespace net = boost::asio;
  namespace http = boost::beast::http;
  if (e.tls) return Status::FailedPrecondition("side requests over https are not made");
  try {
    net::io_context ioc;
    boost::beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    stream.connect(net::ip::tcp::resolver(ioc).resolve(e.host, std::to_string(e.port)));
    http::request<http::empty_body> req{http::verb::get, path, 11};
    req.set(http::field::host, e.host);
    if (!e.api_key.empty()) req.set(http::field::authorization, "Bearer " + e.api_key);
    http::write(stream, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    if (res.result_int() != 200) return Status::IoError(fmt::format("GET {}: HTTP {}", path, res.result_int()));
    return std::move(res.body());
  } catch (const std::exception& ex) {
    return Status::IoError(fmt::format("GET {}: {}", path, ex.what()));
  }
}

namespace {

namespace http = boost::beast::http;

template <typename Stream>
HttpAnswer Exchange(Stream& stream, const Endpoint& e, const std::string& path, const std::string& body) {
  http::request<http::string_body> req{http::verb::post, path, 11};
  req.set(http::field::host, e.host);
  req.set(http::field::content_type, "application/json");
  if (!e.api_key.empty()) req.set(http::field::authorization, "Bearer " + e.api_key);
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);  // an answer of a few hundred tokens with log-probabilities is far smaller
  http::read(stream, buffer, parser);
  return HttpAnswer{static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
}

}  // namespace

Result<HttpAnswer> HttpPost(const Endpoint& e, const std::string& path, const std::string& body, double timeout_s,
                            bool insecure) {
  namespace net = boost::asio;
  try {
    net::io_context ioc;
    boost::beast::tcp_stream tcp(ioc);
    tcp.expires_after(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    tcp.connect(net::ip::tcp::resolver(ioc).resolve(e.host, std::to_string(e.port)));
    if (!e.tls) return Exchange(tcp, e, path, body);
    net::ssl::context ctx(net::ssl::context::tls_client);
    ctx.set_default_verify_paths();
    ctx.set_verify_mode(insecure ? net::ssl::verify_none : net::ssl::verify_peer);
    boost::beast::ssl_stream<boost::beast::tcp_stream&> tls(tcp, ctx);
    SSL_set_tlsext_host_name(tls.native_handle(), e.host.c_str());
    if (!insecure) tls.set_verify_callback(net::ssl::host_name_verification(e.host));
    tls.handshake(net::ssl::stream_base::client);
    return Exchange(tls, e, path, body);
  } catch (const std::exception& ex) {
    return Status::IoError(fmt::format("POST {}: {}", path, ex.what()));
  }
}

}  // namespace goodput::client

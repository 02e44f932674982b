// The Boost.Asio and Beast names the HTTP transport is written with (the
// server, the load generator and the tests' fake SSE server): one set of
// aliases for all three instead of a copy in each.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/beast.hpp>

namespace goodput::asio_names {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using net::awaitable;

// A coroutine's completion token that hands back (error_code, results...)
// instead of throwing: every socket error is a value the caller decides on.
constexpr auto kNoThrow = net::experimental::as_tuple(net::use_awaitable);

}  // namespace goodput::asio_names

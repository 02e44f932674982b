// Reads from a TCP socket together with the kernel's receive timestamp of the
// bytes (SO_TIMESTAMPNS). A single-threaded client that handles a burst of a
// thousand streams' tokens reaches the last of them milliseconds after they
// arrived; the kernel's time says when they arrived, so token times do not
// include the client's own queueing.
#pragma once

#include <time.h>

#include <cstddef>
#include <optional>

namespace goodput::client {

// Asks the kernel to timestamp what `fd` receives. False if it refuses (the
// caller then falls back to its own clock).
bool EnableReceiveTimestamps(int fd);

struct TimedRead {
  size_t bytes = 0;
  bool eof = false;
  bool would_block = false;
  int error = 0;                          // errno, when the read failed
  std::optional<timespec> received;       // CLOCK_REALTIME, when the kernel gave one
};

// One non-blocking recvmsg of up to `len` bytes.
TimedRead ReadTimestamped(int fd, void* buf, size_t len);

}  // namespace goodput::client

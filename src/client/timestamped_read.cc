#include "client/timestamped_read.h"

#include <errno.h>
#include <sys/socket.h>

#include <cstring>

namespace goodput::client {

bool EnableReceiveTimestamps(int fd) {
  const int on = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0;
}

TimedRead ReadTimestamped(int fd, void* buf, size_t len) {
  TimedRead r;
  iovec iov{buf, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) * 2];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
  if (n < 0) {
    r.would_block = errno == EAGAIN || errno == EWOULDBLOCK;
    if (!r.would_block && errno != EINTR) r.error = errno;
    if (errno == EINTR) r.would_block = true;
    return r;
  }
  r.bytes = static_cast<size_t>(n);
  r.eof = n == 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
      r.received = ts;
    }
  }
  return r;
}

}  // namespace goodput::client

#include "core/host_load.h"

#include <sys/wait.h>
#include <unistd.h>

#include <ctime>

#include <gtest/gtest.h>

#include "core/host.h"

namespace goodput {
namespace {

// Spins until this process has used `seconds` of CPU time.
void Spin(double seconds) {
  const std::clock_t start = std::clock();
  volatile double x = 0;
  while (static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC < seconds) x = x + 1;
}

TEST(HostLoad, SharesFromHandMadeSamples) {
  const HostCpuSample a{100, 40, 1, 10};
  const HostCpuSample b{120, 50, 2, 16};  // 20 s: 10 busy, 6 of them ours, 1 stolen
  EXPECT_DOUBLE_EQ(CpuUseBetween(a, b).others_s, 10.0 - 6 + 1);
  EXPECT_DOUBLE_EQ(*OthersCpuShare(CpuUseBetween(a, b)), (10.0 - 6 + 1) / 20);
  EXPECT_FALSE(OthersCpuShare(CpuUseBetween(a, a)).has_value());
  const HostCpuSample odd{120, 50, 1, 40};  // ours above the host's busy time (sampling skew)
  EXPECT_DOUBLE_EQ(*OthersCpuShare(CpuUseBetween(a, odd)), 0);
  // Too short to judge: 1 s of CPU time, of which a daemon's few ticks would read as 10%.
  EXPECT_FALSE(OthersCpuShare(HostCpuUse{0.1, 1.0}).has_value());
}

// A child's CPU time is ours; a process that is not our descendant (a
// grandchild whose parent exited: reparented away) is someone else's.
TEST(HostLoad, OurChildrenAreOursOtherProcessesAreNot) {
  const auto before = SampleHostCpu();
  ASSERT_TRUE(before.has_value());
  EXPECT_GT(before->total_s, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Spin(0.3);
    _exit(0);
  }
  waitpid(child, nullptr, 0);
  const auto mid = SampleHostCpu();
  ASSERT_TRUE(mid.has_value());
  EXPECT_GE(mid->ours_s - before->ours_s, 0.25);

  int done[2];
  ASSERT_EQ(pipe(done), 0);
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    if (fork() == 0) {  // the grandchild: spins once its parent is gone, then says so
      usleep(100'000);
      Spin(0.3);
      (void)!write(done[1], "x", 1);
    }
    _exit(0);
  }
  waitpid(parent, nullptr, 0);
  close(done[1]);
  char c = 0;
  ASSERT_EQ(read(done[0], &c, 1), 1);
  close(done[0]);
  const auto after = SampleHostCpu();
  ASSERT_TRUE(after.has_value());
  EXPECT_LT(after->ours_s - mid->ours_s, 0.2);
  const double others = (after->busy_s - mid->busy_s) - (after->ours_s - mid->ours_s);
  EXPECT_GE(others, 0.25);
}

// A ledger run is marked interrupted when its owner is gone: this process is
// alive; a child that exited is not (nor a new process given its pid, which
// has another start time); another host's cannot be checked and counts as alive.
TEST(HostLoad, AnOwnerIsAliveWhileItsProcessRuns) {
  const std::string self = ProcessOwner();
  EXPECT_EQ(self.rfind(HostName() + ":", 0), 0u) << self;
  EXPECT_TRUE(OwnerIsAlive(self));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(OwnerIsAlive(HostName() + ":" + std::to_string(child) + ":12345"));
  const std::string pid_and_start = self.substr(HostName().size() + 1);
  const std::string pid = pid_and_start.substr(0, pid_and_start.find(':'));
  EXPECT_FALSE(OwnerIsAlive(HostName() + ":" + pid + ":1"));  // our pid, another start time
  EXPECT_TRUE(OwnerIsAlive("another-host:1:1"));
  EXPECT_TRUE(OwnerIsAlive(""));
  EXPECT_TRUE(OwnerIsAlive("garbage"));
}

}  // namespace
}  // namespace goodput

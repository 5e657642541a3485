//===- tessera-run: start N ranks of a program on this host, torchrun-style --------------------===//
//
//   tessera-run -n N [--port P] [--grace S] [--] program [args...]
//
// Starts N processes of `program` with the variables libtessera_dist reads (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT), one per GPU; rank 0 serves
// the rendezvous on loopback. Every rank gets the job's secret, TESSERA_DIST_SECRET (a fresh
// random one unless the environment already has one), which the rendezvous requires of every
// connection. When a rank fails, the others get --grace seconds (default 30) to notice and
// report it (their collectives time out and return an error) before they are terminated. Exits
// with 0 when every rank did, else with the first failure's status (128 + signal if killed).
// One host only; CPU ranks move data with MPI, so they are started with mpirun instead.
//
//===----------------------------------------------------------------------------------------===//
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

struct Options {
  int ranks = 0;
  int port = 0;
  double grace = 30;
  std::vector<char*> command;
};

int usage(const char* why) {
  std::fprintf(stderr, "tessera-run: %s\nusage: tessera-run -n N [--port P] [--grace SECONDS] [--] program [args...]\n",
               why);
  return 2;
}

bool parse(int argc, char** argv, Options& o, std::string& error) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        error = std::string(name) + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "-n" || a == "--nproc" || a == "-np") {
      const char* v = value("-n");
      if (!v) return false;
      o.ranks = std::atoi(v);
    } else if (a == "--port") {
      const char* v = value("--port");
      if (!v) return false;
      o.port = std::atoi(v);
    } else if (a == "--grace") {
      const char* v = value("--grace");
      if (!v) return false;
      o.grace = std::atof(v);
    } else if (a == "--") {
      ++i;
      break;
    } else if (!a.empty() && a[0] == '-') {
      error = "unknown option " + a;
      return false;
    } else {
      break;
    }
  }
  for (; i < argc; ++i) o.command.push_back(argv[i]);
  o.command.push_back(nullptr);
  if (o.ranks < 1)
    error = "-n N (the number of ranks, at least 1) is required";
  else if (o.command.size() < 2)
    error = "no program to run";
  else if (o.port < 0 || o.port > 65535)
    error = "--port must be in 1..65535";
  return error.empty();
}

// A port that was free a moment ago (rank 0 binds it next).
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 29500;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

// 128 random bits as hex: the job's secret.
std::string freshSecret() {
  unsigned char bytes[16] = {};
  for (size_t got = 0; got < sizeof bytes;) {
    ssize_t r = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (r > 0)
      got += static_cast<size_t>(r);
    else if (errno != EINTR)
      return {};
  }
  std::string hex;
  for (unsigned char b : bytes) {
    static const char digits[] = "0123456789abcdef";
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

std::vector<pid_t> children;
void forward(int sig) {
  for (pid_t p : children)
    if (p > 0) ::kill(p, sig);
}

pid_t spawn(const Options& o, int rank, int port) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  auto set = [](const char* k, const std::string& v) { ::setenv(k, v.c_str(), 1); };
  set("RANK", std::to_string(rank));
  set("WORLD_SIZE", std::to_string(o.ranks));
  set("LOCAL_RANK", std::to_string(rank));
  set("LOCAL_WORLD_SIZE", std::to_string(o.ranks));
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", std::to_string(port));
  ::execvp(o.command[0], o.command.data());
  std::fprintf(stderr, "tessera-run: cannot run %s: %s\n", o.command[0], std::strerror(errno));
  ::_exit(127);
}

int statusCode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parse(argc, argv, o, error)) return usage(error.c_str());
  int port = o.port ? o.port : freePort();
  const char* given = std::getenv("TESSERA_DIST_SECRET");
  std::string secret = given && *given ? given : freshSecret();
  if (secret.empty()) {
    std::fprintf(stderr, "tessera-run: cannot draw a job secret from getrandom: %s\n", std::strerror(errno));
    return 1;
  }
  ::setenv("TESSERA_DIST_SECRET", secret.c_str(), 1);
  std::signal(SIGINT, forward);
  std::signal(SIGTERM, forward);
  for (int r = 0; r < o.ranks; ++r) children.push_back(spawn(o, r, port));

  using Clock = std::chrono::steady_clock;
  int running = o.ranks, firstFailure = 0;
  Clock::time_point deadline = Clock::time_point::max();
  bool terminated = false;
  while (running > 0) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --running;
      int rank = -1;
      for (int r = 0; r < o.ranks; ++r)
        if (children[r] == pid) {
          rank = r;
          children[r] = -1;
        }
      int code = statusCode(status);
      if (code != 0) {
        if (WIFSIGNALED(status))
          std::fprintf(stderr, "tessera-run: rank %d was killed by signal %d\n", rank, WTERMSIG(status));
        else
          std::fprintf(stderr, "tessera-run: rank %d exited with status %d\n", rank, code);
        if (!firstFailure) {
          firstFailure = code;
          deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.grace));
        }
      }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;
    if (Clock::now() >= deadline) {
      std::fprintf(stderr, "tessera-run: %s the %d remaining rank(s) after %.0f s of grace\n",
                   terminated ? "killing" : "terminating", running, o.grace);
      forward(terminated ? SIGKILL : SIGTERM);
      deadline = Clock::now() + std::chrono::seconds(5);
      terminated = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return firstFailure;
}

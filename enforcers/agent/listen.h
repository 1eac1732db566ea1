// wardd's listeners without gRPC: the `--listen` URLs, and the unix socket
// with its own accept loop, which reads each caller's credentials
// (SO_PEERCRED, SO_PEERGROUPS) before gRPC sees the connection: gRPC 1.51
// exposes none.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "enforcers/agent/service.h"

namespace ward::agent {

inline constexpr const char* kDefaultListen = "unix:///run/ward/agent/agent.sock";

struct ListenUrl {
  enum Kind { kUnix, kTcp } kind = kUnix;
  std::string url;      // as given
  std::string path;     // kUnix: the socket's absolute path
  std::string address;  // kTcp: "HOST:PORT" for gRPC ("[::1]:PORT" for IPv6)
  uint16_t port = 0;    // kTcp
};

// "unix:///ABSOLUTE/PATH" or "tcp://HOST:PORT" (HOST an IPv4 address, a
// name, or "[IPv6]"); false with *error naming the URL otherwise. Abstract
// sockets ("unix:@...", "unix-abstract:") and relative paths are refused.
bool ParseListenUrl(const std::string& url, ListenUrl* out, std::string* error);

// The callers of the unix listeners, by the peer string gRPC reports for a
// channel made from a descriptor ("fd:N"). Filled at accept, before gRPC
// has the descriptor; an entry is replaced when the kernel hands the same
// number to a new connection. That is race-free because gRPC closes a
// connection's descriptor only when its transport is destroyed, after the
// last call on it: while a handler runs, "fd:N" is still its connection
// (tests/enforcers/agent_transport checks this on a live wardd).
class UnixPeers {
 public:
  void Register(int fd, const Caller& caller);
  // False for a peer string that is not "fd:N" of a registered descriptor.
  bool Lookup(std::string_view peer, Caller* caller) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, Caller> by_fd_;
};

// A unix socket at `path`, in a folder of its own: created (or taken over
// if root's) with mode 0700, or 0710 root:reader_group; the socket 0600 or
// 0660 root:reader_group, set before the folder opens to the group. A
// socket nobody listens on (a crash) is replaced; a live one, or anything
// that is not a socket, is refused.
class UnixListener {
 public:
  // reader_group < 0: no reader group.
  static std::unique_ptr<UnixListener> Open(const std::string& path, int64_t reader_group,
                                            std::string* error);
  ~UnixListener();  // stops, closes and removes the socket

  // Starts the accept loop: uid 0 is an operator, a member of the reader
  // group (effective or supplementary gid) a reader, each registered in
  // `peers` and handed to `serve` (which owns the descriptor then); anyone
  // else is closed at once, before a byte is read, and logged.
  void Start(UnixPeers* peers, std::function<void(int fd)> serve);
  // Stops accepting (idempotent); connections handed over stay gRPC's.
  void Stop();

  const std::string& path() const { return path_; }

 private:
  UnixListener() = default;
  void Loop();
  bool Classify(int fd, Caller* caller, std::string* refused) const;

  std::string path_;
  int64_t reader_group_ = -1;
  int fd_ = -1;
  ino_t inode_ = 0;  // of the socket bound at path_
  int wake_[2] = {-1, -1};
  UnixPeers* peers_ = nullptr;
  std::function<void(int)> serve_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

// A group name or a numeric gid; false with *error if neither.
bool ResolveGroup(const std::string& name, int64_t* gid, std::string* error);

// Publishes the listeners for compiler/agent_guard.h, which denies them to
// every policy (`ward run`, `ward apply`, `explain`): `urls` (as
// Server::Endpoints() gives them, ports as bound) written to `path` as its
// endpoints file, root's, mode 0644, replaced atomically (temporary file,
// fsync, rename, fsync of the folder); the folder is created 0700 if
// missing. A TCP host that is not an IP address is published as 0.0.0.0
// and :: (the port denied on every address).
bool PublishEndpoints(const std::string& path, const std::vector<std::string>& urls,
                      std::string* error);

}  // namespace ward::agent

#include "enforcers/agent/audit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backends/bundle.h"
#include "enforcers/agent/state.h"
#include "enforcers/linux/files.h"

namespace ward::agent {

AuditLog::~AuditLog() {
  if (fd_ >= 0) close(fd_);
}

std::string AuditLine(const AuditEntry& e, const std::string& time, const std::string& prev) {
  const nlohmann::ordered_json j = {{"time", time},       {"who", e.who},
                                    {"action", e.action}, {"policy", e.policy},
                                    {"sha256", e.sha256}, {"generation", e.generation},
                                    {"result", e.result}, {"prev", prev}};
  // Invalid UTF-8 in a caller's identity or an error is replaced, never
  // thrown over.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool AuditLog::Open(int dir_fd, std::string* error) {
  fd_ = enforce::OpenStateFile(dir_fd, kAuditFile, O_RDWR | O_CREAT | O_APPEND, error);
  if (fd_ < 0) return false;
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    *error = std::string(kAuditFile) + ": " + std::strerror(errno);
    return false;
  }
  if (st.st_size == 0) return true;
  // The last line: read backwards in blocks until its start.
  std::string tail;
  off_t end = st.st_size;
  char last = 0;
  if (pread(fd_, &last, 1, end - 1) != 1) {
    *error = std::string(kAuditFile) + ": " + std::strerror(errno);
    return false;
  }
  if (last != '\n') {
    // A crash tore the last write: end that line so the next one is whole,
    // and chain onto what is there (verification names the torn line).
    if (write(fd_, "\n", 1) != 1) {
      *error = std::string(kAuditFile) + ": " + std::strerror(errno);
      return false;
    }
    ++end;
  }
  off_t pos = end - 1;  // the newline
  while (pos > 0) {
    const off_t from = pos >= 4096 ? pos - 4096 : 0;
    std::string block(static_cast<size_t>(pos - from), '\0');
    if (pread(fd_, block.data(), block.size(), from) != static_cast<ssize_t>(block.size())) {
      *error = std::string(kAuditFile) + ": " + std::strerror(errno);
      return false;
    }
    tail = block + tail;
    const size_t nl = block.rfind('\n');
    if (nl != std::string::npos) {
      tail = tail.substr(nl + 1);
      break;
    }
    pos = from;
  }
  head_ = backend::Sha256(tail);
  return true;
}

bool AuditLog::Append(const AuditEntry& entry, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string line = AuditLine(entry, NowRfc3339(), head_);
  const std::string bytes = line + "\n";
  // O_APPEND: one write of the whole line, so lines never interleave.
  if (write(fd_, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()) ||
      fdatasync(fd_) != 0) {
    *error = std::string(kAuditFile) + ": " + std::strerror(errno);
    return false;
  }
  head_ = backend::Sha256(line);
  return true;
}

std::string AuditLog::Head() const {
  std::lock_guard<std::mutex> lock(mu_);
  return head_;
}

}  // namespace ward::agent

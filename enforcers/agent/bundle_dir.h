// Pull mode (README.md, "Pull mode"): `wardd --bundle-dir DIR` applies the
// signed bundles in DIR, a ConfigMap or Secret volume, as they change.
//
// DIR holds bundle files, NAME.wardd-bundle.json (the protobuf JSON mapping
// of ward.agent.v1.Bundle, as `ward compile -t wardd-bundle` writes it), NAME
// being the bundle's policy. Every bundle goes through Agent::Apply with the
// caller "bundle-dir:DIR/FILE" (operator): the same checks, signature
// included, and the same audit as a push. A file that is not a bundle at
// all is refused through `refuse` (audited by the service). Nothing is
// ever removed because a file went away: only a signed tombstone,
// NAME.wardd-remove.json (a RemoveRequest), goes to Agent::Remove.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "enforcers/agent/bundle_file.h"
#include "enforcers/agent/service.h"

namespace ward::agent {

class BundleDir {
 public:
  // Audits a refusal that never reached Apply (policy "" when unknown).
  using Refuse = std::function<void(const Caller& caller, const std::string& policy,
                                    const std::string& reason)>;

  // Watches `dir` (inotify) and applies what is there, then what changes,
  // from a thread of its own; a re-scan every `rescan` as a backstop.
  // nullptr and *error when `dir` is not a folder that can be watched.
  static std::unique_ptr<BundleDir> Start(
      const std::string& dir, Agent* agent, Refuse refuse, std::string* error,
      std::chrono::milliseconds rescan = std::chrono::seconds(30));
  ~BundleDir();
  BundleDir(const BundleDir&) = delete;
  BundleDir& operator=(const BundleDir&) = delete;

 private:
  BundleDir(std::string dir, Agent* agent, Refuse refuse, std::chrono::milliseconds rescan);
  bool Watch(std::string* error);
  void Run();
  void Scan();
  void Handle(const std::string& file, const std::string& bytes);
  void HandleRemove(const std::string& file, const std::string& bytes);

  const std::string dir_;
  Agent* const agent_;
  const Refuse refuse_;
  const std::chrono::milliseconds rescan_;
  int inotify_ = -1;
  int watch_ = -1;  // -1: DIR is gone; watched again when it is back
  int stop_ = -1;   // an eventfd: written once to stop
  // FILE -> SHA-256 of the bytes last handled: a file is handled when its
  // bytes change, once, whatever came of it.
  std::map<std::string, std::string> seen_;
  std::thread thread_;
};

}  // namespace ward::agent

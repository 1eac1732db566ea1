// For the importer tests: an import's text checked as `ward check` checks
// it (checked_import.h) and loaded for `ward explain`'s library, each step
// REQUIREd to succeed.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "compiler/load.h"
#include "importers/checked_import.h"

namespace ward::test {

// `checked->result` is an accepted import; returns its text loaded.
inline std::unique_ptr<ir::LoadedPolicy> CheckAndLoad(importers::CheckedImport* checked,
                                                      const std::string& std_dir) {
  importers::CheckImport(std_dir, checked);
  INFO(checked->result.text);
  INFO(RenderText(checked->sources, checked->sink, RenderOptions{}));
  REQUIRE(checked->result.ok);
  REQUIRE_FALSE(checked->internal_error);
  FrontendOptions frontend;
  frontend.std_dir = std_dir;
  frontend.memory_files["imported.ward"] = checked->result.text;
  ir::LoadStatus status;
  std::string error;
  auto loaded = ir::LoadPolicyFile("imported.ward", std::nullopt, frontend, &status, &error);
  INFO(error);
  REQUIRE(status == ir::LoadStatus::kOk);
  return loaded;
}

}  // namespace ward::test

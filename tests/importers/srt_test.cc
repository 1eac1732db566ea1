// `ward import --from srt` (importers/srt/): srt 0.0.83's settings, the
// README's own examples (Apache-2.0, (c) 2025 Anthropic; source and lines in
// tests/importers/testdata/srt/README.md), each imported, checked as `ward
// check` checks it and then asked, through `ward explain`'s library, the
// questions whose answers srt's code fixes: reads open, the mandatory write
// denies at every depth, a denyWrite winning over a deeper allowWrite, an
// allowRead winning over a denyRead of the same path, a leaf glob deny
// beating a folder's allow, srt's '*' matching nothing. Each refusal srt
// makes is refused, with its JSON pointer.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "compiler/explain.h"
#include "compiler/load.h"
#include "importers/checked_import.h"
#include "importers/srt/srt.h"
#include "tests/importers/checked_load.h"

namespace ward::test {
namespace {

using importers::ImportDiagnostic;

const std::string kStd = std::string(WARD_SOURCE_DIR) + "/policies/std";
const std::string kHome = "/home/u";

std::string ReadTestData(const std::string& name) {
  std::ifstream in(std::string(WARD_SOURCE_DIR) + "/tests/importers/testdata/srt/" + name);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Imported {
  importers::CheckedImport checked;
  std::unique_ptr<ir::LoadedPolicy> loaded;
  const std::string& text() const { return checked.result.text; }
  std::string Diagnostics() const {
    std::string out;
    for (const ImportDiagnostic& d : checked.result.diagnostics) {
      out += std::string(d.severity == Severity::kError ? "error" : "warning") + " #" + d.where +
             ": " + d.message + "\n";
    }
    return out;
  }
  std::string Path(const std::string& path, ir::FsRight right) const {
    std::string error;
    auto e = ir::ExplainPath(loaded->ir, path, right, kHome, &error);
    INFO(error);
    REQUIRE(e);
    return e->decision;
  }
  std::string Read(const std::string& p) const { return Path(p, ir::FsRight::kRead); }
  std::string Write(const std::string& p) const { return Path(p, ir::FsRight::kWrite); }
  // A name is also resolved, to 192.0.2.10, so address rules (`deny to
  // any`) answer as they would at run time.
  std::string Connect(const std::string& host, uint16_t port,
                      ir::Protocol protocol = ir::Protocol::kTcp) const {
    ir::FlowQuery q;
    q.protocol = protocol;
    q.host = host;
    q.port = port;
    if (host.find_first_not_of("0123456789.:") != std::string::npos) {
      q.resolve[host] = "192.0.2.10";
    }
    std::string error;
    auto e = ir::ExplainFlow(loaded->ir, q, &error);
    INFO(error);
    REQUIRE(e);
    return e->decision;
  }
};

// Imports `json` as if srt ran in `cwd`; REQUIREs that it checks.
std::unique_ptr<Imported> Import(const std::string& json, const std::string& cwd = "/w/proj") {
  auto out = std::make_unique<Imported>();
  importers::ImportOptions options;
  options.name = "srt";
  options.source = "settings.json";
  options.from = "srt";
  options.cwd = cwd;
  out->checked.result = importers::ImportSrt(json, options);
  INFO(out->Diagnostics());
  REQUIRE(out->checked.result.ok);
  out->loaded = CheckAndLoad(&out->checked, kStd);
  return out;
}

// The diagnostics of an import srt (and so Ward) refuses.
std::string Refused(const std::string& json) {
  importers::ImportOptions options;
  options.cwd = "/w/proj";
  importers::ImportResult r = importers::ImportSrt(json, options);
  CHECK_FALSE(r.ok);
  std::string out;
  for (const ImportDiagnostic& d : r.diagnostics) {
    if (d.severity == Severity::kError) out += "#" + d.where + ": " + d.message + "\n";
  }
  return out;
}

std::string Settings(const std::string& network, const std::string& filesystem) {
  return R"({"network": {"allowedDomains": [], "deniedDomains": [])" + network +
         R"(}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": [])" + filesystem +
         "}}";
}

TEST_CASE("srt: the README's complete example decides as srt does", "[srt]") {
  auto p = Import(ReadTestData("complete.json"));
  CHECK(p->Diagnostics() ==
        "warning #/network/allowUnixSockets/0: srt (macOS only; Linux ignores the list) allows "
        "every socket under this path; Ward allows this socket only\n"
        "warning #/ignoreViolations: filters srt's violation reports only; no Ward meaning\n");
  // The warnings are in the header too.
  CHECK(p->text().find("// - #/ignoreViolations: filters srt's violation reports only") !=
        std::string::npos);
  // Reads are open, but for the denied folder.
  CHECK(p->Read("/etc/hosts") == "allow");
  CHECK(p->Read("/home/u/.ssh/id_ed25519") == "deny");
  CHECK(p->Path("/home/u/.ssh/id_ed25519", ir::FsRight::kExec) == "deny");
  CHECK(p->Read("/home/u/notes.txt") == "allow");
  // Writes: the write roots, minus the denies and the mandatory ones.
  CHECK(p->Write("/w/proj/main.c") == "allow");
  CHECK(p->Write("/w/proj/src/lib/a.c") == "allow");
  CHECK(p->Write("/tmp/x") == "allow");
  CHECK(p->Write("/etc/hosts") == "deny");
  CHECK(p->Write("/home/u/notes.txt") == "deny");
  CHECK(p->Write("/w/proj/.env") == "deny");
  CHECK(p->Write("/w/proj/config/production.json") == "deny");
  CHECK(p->Write("/w/proj/config/staging.json") == "allow");
  for (const char* path : {"/w/proj/.bashrc", "/w/proj/src/.bashrc", "/w/proj/test/a/b/.zshrc",
                           "/w/proj/.git/hooks/pre-commit", "/w/proj/src/x/.git/hooks/post",
                           "/w/proj/.git/config", "/w/proj/.vscode/settings.json",
                           "/w/proj/src/.claude/commands/c.md", "/w/proj/.mcp.json"}) {
    INFO(path);
    CHECK(p->Write(path) == "deny");
  }
  // Anchored at the cwd only, as in srt: /tmp's are not protected.
  CHECK(p->Write("/tmp/.bashrc") == "allow");
  // The rest of .claude and .git is not on srt's list.
  CHECK(p->Write("/w/proj/.claude/settings.json") == "allow");
  CHECK(p->Write("/w/proj/.git/objects/ab") == "allow");
  // srt's own writable paths.
  CHECK(p->Write("/tmp/claude/x") == "allow");
  CHECK(p->Write("/home/u/.claude/debug/log") == "allow");
  // Network: TCP to the listed names, every port without one; denied wins.
  CHECK(p->Connect("github.com", 443) == "allow");
  CHECK(p->Connect("github.com", 22) == "allow");
  CHECK(p->Connect("codeload.github.com", 443) == "allow");
  CHECK(p->Connect("npmjs.org", 443) == "allow");
  CHECK(p->Connect("example.org", 443) == "deny");
  CHECK(p->Connect("malicious.com", 443) == "deny");
  CHECK(p->Connect("github.com", 443, ir::Protocol::kUdp) == "deny");
  // Same input, same bytes.
  CHECK(Import(ReadTestData("complete.json"))->text() == p->text());
}

TEST_CASE("srt: a denyWrite wins over a deeper allowWrite", "[srt]") {
  auto p =
      Import(Settings("", R"(, "allowWrite": [".", "secrets/public"], "denyWrite": ["secrets"])"));
  CHECK(p->Write("/w/proj/secrets/public/key.pub") == "deny");
  CHECK(p->Write("/w/proj/secrets/x") == "deny");
  CHECK(p->Write("/w/proj/src/x") == "allow");
  CHECK(p->text().find("// - #/filesystem/allowWrite/1 /w/proj/secrets/public is under "
                       "#/filesystem/denyWrite/0 (/w/proj/secrets): srt's denyWrite wins at any "
                       "depth; not granted") != std::string::npos);
  // Positive control: the same allowWrite without the deny is granted.
  auto q = Import(Settings("", R"(, "allowWrite": ["secrets/public"])"));
  CHECK(q->Write("/w/proj/secrets/public/key.pub") == "allow");
  CHECK(q->Write("/w/proj/secrets/x") == "deny");
}

TEST_CASE("srt: reads: the same path allowed wins, a deeper deny wins, a leaf glob wins", "[srt]") {
  // README "Workspace-only filesystem access", with cwd under the denied folder.
  auto p = Import(ReadTestData("workspace_only.json"), "/Users/me/proj");
  CHECK(p->Read("/Users/other/x") == "deny");
  CHECK(p->Read("/Users/me/proj/src/a.c") == "allow");
  CHECK(p->Write("/Users/me/proj/src/a.c") == "allow");
  CHECK(p->Read("/usr/bin/env") == "allow");
  // The same path in both lists: srt lets the allow win.
  auto same = Import(Settings("", R"(, "denyRead": ["/data"], "allowRead": ["/data"])"));
  CHECK(same->Read("/data/x") == "allow");
  // A deeper deny under an allow, under a deny.
  auto deeper = Import(
      Settings("", R"(, "denyRead": ["/data", "/data/pub/secret"], "allowRead": ["/data/pub"])"));
  CHECK(deeper->Read("/data/x") == "deny");
  CHECK(deeper->Read("/data/pub/x") == "allow");
  CHECK(deeper->Read("/data/pub/secret/x") == "deny");
  // A leaf glob deny beats a deeper folder's allow (srt's late denies).
  auto leaf = Import(Settings(
      "",
      R"(, "denyRead": ["/w", "/w/**/.env"], "allowRead": ["/w/src"], "allowWrite": ["/w/out"])"));
  CHECK(leaf->Read("/w/src/main.c") == "allow");
  CHECK(leaf->Read("/w/src/.env") == "deny");
  CHECK(leaf->Read("/w/src/a/b/.env") == "deny");
  CHECK(leaf->Read("/w/out/.env") == "deny");
  CHECK(leaf->Read("/w/out/x") == "allow");  // a write root srt binds back
  CHECK(leaf->Read("/w/other") == "deny");
}

TEST_CASE("srt: '*' may match nothing, as in srt; relative, ~ and dir/** paths", "[srt]") {
  auto p = Import(
      Settings("", R"(, "allowWrite": ["."], "denyWrite": ["secret*.txt", "~/.aws", "build/**"])"));
  CHECK(p->Write("/w/proj/secret.txt") == "deny");
  CHECK(p->Write("/w/proj/secret-1.txt") == "deny");
  CHECK(p->Write("/w/proj/public.txt") == "allow");
  CHECK(p->Write("/w/proj/build/out.o") == "deny");
  CHECK(p->Write("/w/proj/build") == "deny");
  CHECK(p->Write("/w/proj/builder") == "allow");
  auto h = Import(Settings("", R"(, "allowWrite": ["~"], "denyWrite": ["~/.aws"])"));
  CHECK(h->Write("/home/u/.aws/credentials") == "deny");
  CHECK(h->Write("/home/u/x") == "allow");
}

TEST_CASE("srt: domains, ports, addresses", "[srt]") {
  auto p = Import(Settings(
      R"(, "allowedDomains": ["api.example.com:443", "[::1]:8080", "10.0.0.5", "localhost:3000"],
          "deniedDomains": ["*:22"], "deniedResolvedAddresses": ["169.254.0.0/16"])",
      ""));
  CHECK(p->Connect("api.example.com", 443) == "allow");
  CHECK(p->Connect("api.example.com", 80) == "deny");
  CHECK(p->Connect("::1", 8080) == "allow");
  CHECK(p->Connect("::1", 8081) == "deny");
  CHECK(p->Connect("10.0.0.5", 5432) == "allow");
  CHECK(p->Connect("10.0.0.5", 22) == "deny");
  CHECK(p->Connect("127.0.0.1", 3000) == "allow");
  CHECK(p->Connect("169.254.169.254", 80) == "deny");
  // `*` alone is a deny only.
  auto all = Import(Settings(R"(, "allowedDomains": ["example.com"], "deniedDomains": ["*"])", ""));
  CHECK(all->Connect("example.com", 443) == "deny");
  CHECK(all->text().find("deny to any  // #/network/deniedDomains/0") != std::string::npos);
}

TEST_CASE("srt: what srt refuses is refused, at its pointer", "[srt]") {
  CHECK(Refused("[]") == "#: the settings must be a JSON object\n");
  CHECK(Refused("{") == "#: not valid JSON (srt reads its settings with JSON.parse)\n");
  CHECK(Refused(R"({"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}})") ==
        "#: missing 'network' (srt requires it and refuses the file)\n");
  CHECK(Refused(Settings(R"(, "allowedDomains": ["*.com"])", "")) ==
        "#/network/allowedDomains/0: '*.com' is too broad: srt refuses patterns like \"*.com\" "
        "or \"*\"\n");
  CHECK(Refused(Settings(R"(, "allowedDomains": ["*"])", "")) ==
        "#/network/allowedDomains/0: '*' is too broad: srt refuses patterns like \"*.com\" or "
        "\"*\"\n");
  CHECK(Refused(Settings(R"(, "allowedDomains": ["example.com:0443"])", "")) ==
        "#/network/allowedDomains/0: 'example.com:0443' has no valid port (1 to 65535, no "
        "leading zero)\n");
  CHECK(Refused(Settings(R"(, "allowedDomains": ["https://example.com"])", "")) ==
        "#/network/allowedDomains/0: 'https://example.com' is a URL or path, not a domain (srt "
        "refuses it)\n");
  CHECK(Refused(Settings(R"(, "allowedDomains": ["::1"])", "")) ==
        "#/network/allowedDomains/0: '::1' is not valid: write an IPv6 address in brackets "
        "([::1]:443)\n");
  CHECK(Refused(Settings(R"(, "allowedDomains": ["intranet"])", "")) ==
        "#/network/allowedDomains/0: 'intranet' is not a domain srt accepts (a dotted name, an "
        "IP address or localhost)\n");
  // srt accepts `*.*.com` but it never matches: in a deny that is a hole.
  CHECK(Refused(Settings(R"(, "deniedDomains": ["*.*.com"])", "")) ==
        "#/network/deniedDomains/0: '*.*.com' is accepted by srt but can never match a host "
        "(only a leading '*.' is a wildcard); write the domains it should cover\n");
  // A deny Ward cannot say would widen if dropped: refused. An allow: a warning.
  CHECK(Refused(Settings("", R"(, "denyRead": ["/w/file?.txt"])")) ==
        "#/filesystem/denyRead/0: '/w/file?.txt' uses '?' or '[...]', which Ward paths cannot "
        "say (W1046); dropping it would widen: write '*' or one path per alternative\n");
  CHECK(Refused(Settings("", R"(, "denyWrite": ["/w/**/"])")) ==
        "#/filesystem/denyWrite/0: a deny glob ending in '/' matches no path (srt refuses it)\n");
  CHECK(Refused(R"({"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem":
                  {"denyRead": [], "allowWrite": [], "denyWrite": []},
                  "credentials": {"files": [{"path": "~/.npmrc", "mode": "mask"}]}})")
            .find("#/credentials/files/0: mode 'mask'") == 0);
  CHECK(Refused(R"({"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem":
                  {"denyRead": [], "allowWrite": [], "denyWrite": []}, "credentials": {"bogus": 1}})") ==
        "#/credentials/bogus: unknown key 'bogus' (srt refuses unknown keys here)\n");
  // --cwd is required.
  importers::ImportOptions no_cwd;
  CHECK_FALSE(importers::ImportSrt(Settings("", ""), no_cwd).ok);
}

TEST_CASE("srt: what has no Ward meaning is a warning, and the import goes on", "[srt]") {
  auto p = Import(Settings(R"(, "httpProxyPort": 8888, "allowAllDomains": true)",
                           R"(, "allowWrite": ["/w/a?b"], "allowGitConfig": true)"));
  CHECK(p->Diagnostics() ==
        "warning #/network/allowAllDomains: unknown key 'allowAllDomains': srt 0.0.83 ignores it "
        "without a word; not translated\n"
        "warning #/network/httpProxyPort: an external proxy that does its own filtering in srt; "
        "Ward enforces the domain lists itself and has no such proxy\n"
        "warning #/filesystem/allowWrite/0: '/w/a?b' uses '?' or '[...]', which Ward paths "
        "cannot say (W1046); not translated (narrower)\n");
  // allowGitConfig lifts the .git/config deny only.
  CHECK(p->Write("/w/proj/.git/config") == "deny");  // not a write root here: denied anyway
  auto g = Import(Settings("", R"(, "allowWrite": ["."], "allowGitConfig": true)"));
  CHECK(g->Write("/w/proj/.git/config") == "allow");
  CHECK(g->Write("/w/proj/.git/hooks/pre-push") == "deny");
  // filesystem.disabled: srt drops every rule, the mandatory ones too.
  auto d = Import(Settings("", R"(, "disabled": true)"));
  CHECK(d->Write("/etc/x") == "allow");
  CHECK(d->Write("/w/proj/.bashrc") == "allow");
}

}  // namespace
}  // namespace ward::test

// `ward compile -t seccomp` as a user runs it: the files, the manifest, the
// same bytes every time, the bypass warnings, and nothing written on error.
#include <openssl/evp.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/run_ward.h"

namespace ward::test {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Sha256(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  REQUIRE(EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) == 1);
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    out += hex;
  }
  return out;
}

// A fresh, absent output folder.
std::string OutDir(const std::string& name) {
  const std::string dir = ScratchDir() + "/" + name;
  fs::remove_all(dir);
  return dir;
}

const char* const kPolicy = R"(policy agent {
  syscalls {
    arch x86_64, aarch64
    default errno EPERM
    allow @system-service
    errno EPERM clone if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
    errno EAFNOSUPPORT socket if arg0 not in [AF_UNIX, AF_INET, AF_INET6]
    kill ptrace
  }
}
)";

}  // namespace

TEST_CASE("compile -t seccomp: a program and a dump per architecture, and the manifest") {
  const std::string p = WriteTemp("agent.ward", kPolicy);
  const std::string out = OutDir("seccomp-a");
  Run r = Ward("compile --color never " + p + " -t seccomp -o " + out, kStdEnv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == out + "/agent.aarch64.bpf\n" + out + "/agent.aarch64.pfc\n" + out +
                     "/agent.x86_64.bpf\n" + out + "/agent.x86_64.pfc\n" + out +
                     "/manifest.json\n");
  CHECK(
      r.err ==
      "warning[B3001]: not enforced by the chosen targets: filesystem, network, process, limits\n");
  const auto m = nlohmann::json::parse(Slurp(out + "/manifest.json"));
  CHECK(m["version"] == 1);
  CHECK(m["policy"] == "agent");
  CHECK(m["targets"] == nlohmann::json::array({"seccomp"}));
  CHECK(m["coverage"] == nlohmann::json::parse(R"({"syscalls": ["seccomp"],
      "filesystem": "unenforced", "network": "unenforced", "process": "unenforced",
      "limits": "unenforced"})"));
  REQUIRE(m["artifacts"].size() == 4);
  for (const auto& a : m["artifacts"]) {
    CHECK(a["target"] == "seccomp");
    CHECK(a["sha256"] == Sha256(Slurp(out + "/" + a["path"].get<std::string>())));
  }
  CHECK(m["artifacts"][0]["path"] == "agent.aarch64.bpf");
  const std::string bpf = Slurp(out + "/agent.x86_64.bpf");
  CHECK(bpf.size() % 8 == 0);
  CHECK(Slurp(out + "/agent.x86_64.pfc").rfind("#\n# pseudo filter code start\n#\n", 0) == 0);
}

TEST_CASE("compile -t seccomp: the same policy gives the same bytes") {
  const std::string p = WriteTemp("agent2.ward", kPolicy);
  const std::string a = OutDir("seccomp-b1"), b = OutDir("seccomp-b2");
  REQUIRE(Ward("compile " + p + " -t seccomp -o " + a, kStdEnv).status == 0);
  REQUIRE(Ward("compile " + p + " -t seccomp -o " + b, kStdEnv).status == 0);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(a)) {
    const fs::path name = entry.path().filename();
    INFO(name);
    CHECK(Slurp(entry.path()) == Slurp(fs::path(b) / name));
    ++files;
  }
  CHECK(files == 5);
}

TEST_CASE("compile -t seccomp: re-opening a bypass class is a warning, and compiles") {
  const std::string p = WriteTemp("uring.ward", R"(policy p {
  syscalls {
    default allow
    allow io_uring_setup, io_uring_enter, io_uring_register
  }
}
)");
  const std::string out = OutDir("seccomp-c");
  Run r = Ward("compile --color never " + p + " -t seccomp -o " + out, kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.err == p + ":4:5: warning[B3003]: this rule re-opens io_uring (io_uring_enter, "
                     "io_uring_register, io_uring_setup), closed by default: the operations "
                     "io_uring submits are not syscalls, so no seccomp filter sees them\n"
                     " 4 |     allow io_uring_setup, io_uring_enter, io_uring_register\n"
                     "   |     ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
                     "  = hint: keep it only if the workload needs it; without it these calls "
                     "get errno ENOSYS\n"
                     "warning[B3001]: not enforced by the chosen targets: filesystem, network, "
                     "process, limits\n");
  CHECK(fs::exists(out + "/p.x86_64.bpf"));
}

TEST_CASE("compile -t seccomp,oci: a warning both backends give is printed once") {
  const std::string p = WriteTemp("uring2.ward", R"(policy p {
  syscalls {
    default allow
    allow io_uring_setup
  }
}
)");
  const std::string out = OutDir("seccomp-oci-once");
  Run r = Ward("compile --color never " + p + " -t seccomp,oci -o " + out, kStdEnv);
  CHECK(r.status == 0);
  size_t count = 0;
  for (size_t at = 0; (at = r.err.find("warning[B3003]", at)) != std::string::npos; ++at) ++count;
  CHECK(count == 1);
  CHECK(r.err.find(p + ":4:5: warning[B3003]: this rule re-opens io_uring") == 0);
}

TEST_CASE("compile -t seccomp: on an error nothing is written") {
  const std::string p = WriteTemp("huge.ward", R"(policy p {
  syscalls {
    default allow
    errno EPERM kill if arg0 != 1 and arg1 != 2
    errno EPERM tgkill if arg0 != 3 and arg1 != 4
  }
}
)");
  const std::string out = OutDir("seccomp-d");
  Run r = Ward("compile --color never " + p + " -t seccomp -o " + out, kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err == p + ":3:5: error[B3002]: the filter for x86_64 has 6448 instructions; the "
                     "kernel loads at most 4096\n"
                     " 3 |     default allow\n"
                     "   |     ^~~~~~~~~~~~~\n"
                     "warning[B3001]: not enforced by the chosen targets: syscalls, filesystem, "
                     "network, process, limits\n"
                     "ward compile: nothing written\n");
  CHECK_FALSE(fs::exists(out));
  // Not even beside the artifacts of another target.
  Run both = Ward("compile " + p + " -t seccomp,process -o " + out, kStdEnv);
  CHECK(both.status == 1);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace ward::test

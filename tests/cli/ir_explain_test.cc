// `ward ir` and `ward explain` as a user runs them: exact output, exit codes.
#include <catch2/catch.hpp>

#include "tests/cli/run_ward.h"

using namespace ward::test;

namespace {

const char* kPolicy = R"(let home_secrets = ["~/.ssh", "~/.aws"]

policy agent {
  filesystem {
    allow read write "/workspace"
    allow read "~"
    deny read home_secrets
  }
  network {
    allow tcp to "registry.npmjs.org", "*.github.com" port 443
    allow to loopback port 53
    allow tcp to 10.20.0.0/16 ports 5432, 8000-8100
    deny to 169.254.169.254
    deny tcp to 10.20.99.0/24
    allow ingress tcp from 10.1.0.0/16 port 8080
    allow unix "/run/app.sock"
  }
}
)";

std::string PolicyFile() { return WriteTemp("agent.ward", kPolicy); }

}  // namespace

TEST_CASE("explain --connect: allowed by an address rule, with the rule's location") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --connect 10.20.1.5:5432", kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.out == "allow egress tcp to 10.20.1.5 port 5432\n  " + p +
                     ":12:5: allow tcp to 10.20.0.0/16 ports 5432, 8000-8100\n");
}

TEST_CASE("explain --connect: a deny carved out of the allow names the deny") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --connect 10.20.99.7:8050 --fail-on deny", kStdEnv);
  CHECK(r.status == 1);
  CHECK(r.out ==
        "deny egress tcp to 10.20.99.7 port 8050\n  " + p + ":14:5: deny tcp to 10.20.99.0/24\n");
}

TEST_CASE("explain --connect: nothing matched is a deny by default") {
  Run r = Ward("explain " + PolicyFile() + " --connect [2001:db8::1]:443", kStdEnv);
  CHECK(r.status == 0);
  CHECK(r.out == "deny egress tcp to 2001:db8::1 port 443\n  no rule matched: denied by default\n");
}

TEST_CASE("explain --connect: names, --resolve, and the metadata address") {
  std::string p = PolicyFile();
  Run name = Ward("explain " + p + " --connect api.github.com:443", kStdEnv);
  CHECK(name.out == "allow egress tcp to api.github.com port 443\n  " + p +
                        ":10:5: allow tcp to \"registry.npmjs.org\", \"*.github.com\" port "
                        "443\n  note: 'api.github.com' was not resolved: only domain rules were "
                        "consulted (give --resolve api.github.com=IP to add the address rules)\n");
  Run apex = Ward("explain " + p + " --connect github.com:443", kStdEnv);
  CHECK(apex.out.rfind("deny egress tcp to github.com port 443\n", 0) == 0);
  Run metadata = Ward(
      "explain " + p + " --connect api.github.com:443 --resolve api.github.com=169.254.169.254",
      kStdEnv);
  CHECK(metadata.out == "deny egress tcp to api.github.com (169.254.169.254) port 443\n  " + p +
                            ":13:5: deny to 169.254.169.254\n");
  Run mapped = Ward("explain " + p + " --connect [::ffff:169.254.169.254]:80", kStdEnv);
  CHECK(mapped.out.rfind("deny egress tcp to ::ffff:169.254.169.254 port 80\n", 0) == 0);
}

TEST_CASE("explain --listen --from, --unix, --connect/icmp") {
  std::string p = PolicyFile();
  CHECK(Ward("explain " + p + " --listen 8080 --from 10.1.2.3", kStdEnv).out ==
        "allow ingress tcp from 10.1.2.3 port 8080\n  " + p +
            ":15:5: allow ingress tcp from 10.1.0.0/16 port 8080\n");
  CHECK(Ward("explain " + p + " --listen 8080/udp --from 10.1.2.3", kStdEnv)
            .out.rfind("deny ingress udp", 0) == 0);
  CHECK(Ward("explain " + p + " --unix /run/app.sock", kStdEnv).out ==
        "allow connect unix /run/app.sock\n  " + p + ":16:5: allow unix \"/run/app.sock\"\n");
  CHECK(Ward("explain " + p + " --connect 127.0.0.1/icmp", kStdEnv).out ==
        "deny egress icmp to 127.0.0.1\n  no rule matched: denied by default\n");
}

TEST_CASE("explain --path: most specific wins; ~ needs --home") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --path /home/u/.ssh/id --access read --home /home/u", kStdEnv);
  CHECK(r.out == "deny read /home/u/.ssh/id\n  " + p +
                     ":7:5: deny read home_secrets\n  note: most specific pattern: ~/.ssh\n");
  Run no_home = Ward("explain " + p + " --path /workspace/a --access write", kStdEnv);
  CHECK(no_home.status == 2);
  CHECK(no_home.err == "ward explain: the policy has rules under ~: give --home DIR\n");
}

TEST_CASE("explain: usage errors exit 2") {
  std::string p = PolicyFile();
  CHECK(Ward("explain " + p, kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --connect host", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --connect 1.2.3.4:0", kStdEnv).status == 2);
  CHECK(Ward("explain " + p + " --listen 80", kStdEnv).status == 2);
}

TEST_CASE("explain --format json") {
  std::string p = PolicyFile();
  Run r = Ward("explain " + p + " --connect 10.20.1.5:5432 --format json", kStdEnv);
  CHECK(r.out ==
        "{\n  \"version\": 1,\n  \"decision\": \"allow\",\n  \"query\": \"egress tcp to "
        "10.20.1.5 port 5432\",\n  \"by_default\": false,\n  \"rules\": [\n    {\n      "
        "\"location\": \"" +
            p +
            ":12:5\",\n      \"text\": \"allow tcp to 10.20.0.0/16 ports 5432, "
            "8000-8100\"\n    }\n  ],\n  \"notes\": []\n}\n");
}

TEST_CASE("ir: deterministic JSON, several policies need --policy") {
  std::string p = PolicyFile();
  Run a = Ward("ir " + p, kStdEnv);
  Run b = Ward("ir " + p, kStdEnv);
  CHECK(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("\"version\": 1") != std::string::npos);
  CHECK(a.out.find("\"cidrs\": [\n            \"10.20.0.0/18\",") != std::string::npos);
  std::string two = WriteTemp("two.ward", "policy a {}\npolicy b {}\n");
  Run r = Ward("ir " + two, kStdEnv);
  CHECK(r.status == 2);
  CHECK(r.err == "ward: " + two +
                     ": the file holds several policies (a, b): choose one with "
                     "--policy NAME\n");
  CHECK(Ward("ir " + two + " --policy b", kStdEnv).status == 0);
}

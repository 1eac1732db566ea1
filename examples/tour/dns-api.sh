# Sourced by ci/readme_tour.py before the domain-grant block, in the block's
# own network namespace: the cgroup of cgroup.sh, and a DNS server on
# 10.53.0.1 (an address on this namespace's lo) that answers api.example.test
# with 10.1.2.3 for 60 s (and no AAAA record). All of it goes when the block ends.
tour_cgroup2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$tour_cgroup2" ] || return 1
tour_made_agents=0
[ -d "$tour_cgroup2/agents" ] || { mkdir "$tour_cgroup2/agents" && tour_made_agents=1; }
mkdir "$tour_cgroup2/agents/build-42" || return 1
ip addr add 10.53.0.1/32 dev lo || return 1
# dnsmasq replaces its pid file (unlink, then create): never point it at a
# shared path such as /dev/null.
tour_dns=$(mktemp -d /tmp/ward-tour-dns.XXXXXX)
dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts --port=53 \
  --listen-address=10.53.0.1 --bind-interfaces --host-record=api.example.test,10.1.2.3 \
  --local=/example.test/ --local-ttl=60 --user=root --pid-file="$tour_dns/pid" &
tour_dns_pid=$!
trap 'kill $tour_dns_pid; wait $tour_dns_pid 2>/dev/null; rm -rf "$tour_dns"
  rmdir "$tour_cgroup2/agents/build-42"; [ $tour_made_agents = 1 ] && rmdir "$tour_cgroup2/agents"' EXIT
for _ in $(seq 50); do
  ss -Hlun 'src 10.53.0.1 and sport = :53' | grep -q . && break
  sleep 0.1
done

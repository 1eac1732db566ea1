# Sourced by ci/readme_tour.py in the block's own network and mount namespaces:
# a DNS server on 127.0.0.1 that answers every name with 203.0.113.80 and
# 2001:db8::80 (documentation addresses), and a resolv.conf that points at it, bound over
# /etc/resolv.conf in this mount namespace only. Both go when the block ends.
tour_dns=$(mktemp -d /tmp/ward-tour-dns.XXXXXX)
printf 'nameserver 127.0.0.1\n' >"$tour_dns/resolv.conf"
mount --bind "$tour_dns/resolv.conf" /etc/resolv.conf || return 1
dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts --port=53 --listen-address=127.0.0.1 \
  --bind-interfaces --address=/#/203.0.113.80 --address=/#/2001:db8::80 --local-ttl=60 --user=root \
  --pid-file="$tour_dns/pid" &
tour_dns_pid=$!
trap 'kill $tour_dns_pid; wait $tour_dns_pid 2>/dev/null; umount /etc/resolv.conf; rm -rf "$tour_dns"' EXIT
for _ in $(seq 50); do
  getent ahostsv4 registry.npmjs.org >/dev/null 2>&1 && break
  sleep 0.1
done

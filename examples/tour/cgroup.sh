# Sourced by ci/readme_tour.py before the `ward apply` block: the cgroup the
# examples apply to, agents/build-42, under the cgroup v2 mount (/sys/fs/cgroup,
# or /sys/fs/cgroup/unified on a hybrid host), removed when the block ends.
tour_cgroup2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$tour_cgroup2" ] || return 1
tour_made_agents=0
[ -d "$tour_cgroup2/agents" ] || { mkdir "$tour_cgroup2/agents" && tour_made_agents=1; }
mkdir "$tour_cgroup2/agents/build-42" || return 1
trap 'rmdir "$tour_cgroup2/agents/build-42"; [ $tour_made_agents = 1 ] && rmdir "$tour_cgroup2/agents"' EXIT

include seed.local
include common.inc
ignore net
?HAS_NET: seccomp
caps.drop all
seccomp !chroot,@clock,unlinkat:ENOENT
protocol unix,inet,-inet
net none
private-dev
private-tmp
private-etc hosts
memory-deny-write-execute
restrict-namespaces
rlimit-nofile 64

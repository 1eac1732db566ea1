# A firejail profile for a command-line tool: firejail's common blacklists
# (disable-common.inc), no network, firejail's default seccomp list.
include firejail-demo.local
include disable-common.inc
caps.drop all
net none
nonewprivs
seccomp
private-tmp
nosound
apparmor

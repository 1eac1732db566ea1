# Order matters in firejail: noblacklist only exempts later blacklists.
noblacklist ${HOME}/.ssh
blacklist ${HOME}/.ssh
blacklist ${HOME}/.gnupg
noblacklist ${HOME}/.gnupg
whitelist /var/lib/xkb
read-only ${HOME}/notes
read-write ${HOME}/notes/scratch
read-write ${HOME}/work/data
read-only ${HOME}/work
noexec ${HOME}/bin
blacklist ${HOME}/.mozilla*
private-cache
disable-mnt
nosound
private-dev
private-etc hosts,passwd
private-bin bash,sh

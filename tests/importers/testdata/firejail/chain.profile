include chain.local
include globals.local
include chain.inc
net none
?BROWSER_DISABLE_U2F: nou2f
?BROWSER_ALLOW_DRM: ignore noexec ${HOME}
noexec ${HOME}
ignore include disable-programs.inc
include disable-programs.inc

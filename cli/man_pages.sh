#!/bin/sh
# Builds ward's man pages with help2man (cli/CMakeLists.txt): ward(1) from
# `ward --help`, and ward-COMMAND(1) for each command `ward --help` lists,
# from `ward help COMMAND` (the same text as `ward COMMAND --help`; for
# remove, status and diff followed by their --host form).
# A command with subcommands (audit) gets theirs in its page. Sections a
# page adds to the help text are in cli/man/PAGE.h2m (help2man --include).
#   man_pages.sh WARD OUTDIR VERSION
set -eu
ward=$1 out=$2 version=$3
extra=$(cd "$(dirname "$0")" && pwd)/man
work=$out/.wrappers
rm -rf "$out" && mkdir -p "$out" "$work"

# help2man runs PROGRAM --help: a wrapper per command, named as the page.
wrapper() {  # NAME ARGS...
  name=$1
  shift
  printf '#!/bin/sh\nexec "%s" %s\n' "$ward" "$*" >"$work/$name"
  chmod +x "$work/$name"
}

see_also() {  # PAGE PAGES
  printf '[SEE ALSO]\n%s\n' "$2" >"$work/$1.h2m"
  if [ -f "$extra/$1.h2m" ]; then cat "$extra/$1.h2m" >>"$work/$1.h2m"; fi
}

commands=$("$ward" --help | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | grep -vx help)
pages=""
for c in $commands; do pages="$pages${pages:+, }ward-$c(1)"; done

wrapper ward
see_also ward "$pages"
help2man --no-info --version-string="$version" --name="one policy language for AI-agent sandboxes" \
  --include="$work/ward.h2m" --output="$out/ward.1" "$work/ward"

for c in $commands; do
  description=$("$ward" --help | sed -n "s/^  $c  *//p")
  subs=$("$ward" help "$c" | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
  if [ -z "$subs" ]; then
    wrapper "ward-$c" help "$c"
  else
    script="\"$ward\" help $c"
    for s in $subs; do script="$script; echo; \"$ward\" help $c $s"; done
    printf '#!/bin/sh\n%s\n' "$script" >"$work/ward-$c"
    chmod +x "$work/ward-$c"
  fi
  see_also "ward-$c" "ward(1)"
  help2man --no-info --version-string="$version" --name="$description" \
    --include="$work/ward-$c.h2m" --output="$out/ward-$c.1" "$work/ward-$c"
done
rm -rf "$work"

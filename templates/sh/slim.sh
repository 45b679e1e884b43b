#!/bin/sh
# slim.sh DIR RULE...: leaves out of DIR (the environment, or the extras directory) what no package loads at runtime,
# in the step that installed it, so that no layer holds it (the rules: envgen/kb/data/leave_out.yaml, read by
# envgen/plan/slim.py). A rule: `-r NAME`, then `-d PATTERN` (directories, removed whole) or `-f PATTERN` (files), one
# or more, then `-k PATTERN` for each path a package does load (kept). Patterns are find(1) -path patterns relative to DIR (`*`
# also matches "/"). Prints the megabytes left out. A DIR that does not exist (nothing installed) is left alone.
set -eu
dir=${1:?slim.sh DIR RULE...}
shift
[ -d "$dir" ] || exit 0
before=$(du -sk "$dir" | cut -f1)
set -f  # patterns are find's, never the shell's
kinds="" patterns="" keeps=""
apply() {  # the rule gathered so far: every pattern of it, minus what it keeps
    [ -n "$patterns" ] || return 0
    for pattern in $patterns; do
        kind=${kinds%% *}
        kinds=${kinds#* }
        set -- "$dir" -type "$kind" -path "$dir/$pattern"
        for keep in $keeps; do set -- "$@" ! -path "$dir/$keep"; done
        if [ "$kind" = d ]; then
            find "$@" -prune -exec rm -rf {} +
        else
            find "$@" -exec rm -f {} +
        fi
    done
    kinds="" patterns="" keeps=""
}
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "slim.sh: $1 needs a pattern" >&2; exit 2; }
    case $1 in
        -r) apply ;;
        -d|-f) kinds="$kinds${1#-} " patterns="$patterns $2" ;;
        -k) keeps="$keeps $2" ;;
        *) echo "slim.sh: unknown option $1 (-r NAME, -d, -f or -k PATTERN)" >&2; exit 2 ;;
    esac
    shift 2
done
apply
after=$(du -sk "$dir" | cut -f1)
echo "envgen: left out of $dir what nothing loads at runtime: $(( (before - after) / 1024 )) MB (leave_out.yaml)"

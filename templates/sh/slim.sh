#!/bin/sh
# slim.sh DIR RULE...: leaves out of DIR (the environment, or the extras directory) what no package loads at runtime,
# in the step that installed it, so that no layer holds it (the rules: envgen/kb/data/leave_out.yaml, read by
# envgen/plan/slim.py). A rule: `-r NAME`, then `-d PATTERN` (directories, removed whole) or `-f PATTERN` (files), one
# or more, then `-k PATTERN` for each path a package does load (kept), `-c PATTERN` for a path only a compiler reads
# (kept where the image holds a C or C++ compiler: on PATH, or the environment's own conda compilers). Patterns are
# find(1) -path patterns relative to DIR (`*` also matches "/"). Prints the megabytes left out. A DIR that does not
# exist (nothing installed) is left alone.
set -eu
dir=${1:?slim.sh DIR RULE...}
shift
[ -d "$dir" ] || exit 0
set -f  # patterns are find's, never the shell's
kinds="" patterns="" keeps="" compiler="" expression=""
has_compiler() {  # once: a C or C++ compiler in the image (torch's JIT extensions and inductor look for these)
    if [ -z "$compiler" ]; then
        compiler=no
        for cc in cc gcc c++ g++ clang clang++; do
            if command -v "$cc" >/dev/null 2>&1; then compiler=yes; fi
        done
        if [ -d "$dir/bin" ] && [ -n "$(find "$dir/bin" -maxdepth 1 \( -name '*-gcc' -o -name '*-g++' \
                -o -name '*-cc' -o -name '*-c++' -o -name 'clang*' \) -print)" ]; then compiler=yes; fi
    fi
    [ "$compiler" = yes ]
}
apply() {  # the rule gathered so far, into the one find expression: each pattern of it, minus what it keeps
    [ -n "$patterns" ] || return 0
    for pattern in $patterns; do
        kind=${kinds%% *}
        kinds=${kinds#* }
        term="( -type $kind -path ./$pattern"
        for keep in $keeps; do term="$term ! -path ./$keep"; done
        if [ "$kind" = d ]; then term="$term -prune -print0 )"; else term="$term -print0 )"; fi
        expression="$expression${expression:+ -o }$term"
    done
    kinds="" patterns="" keeps=""
}
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "slim.sh: $1 needs a pattern" >&2; exit 2; }
    case $1 in
        -r) apply ;;
        -d|-f) kinds="$kinds${1#-} " patterns="$patterns $2" ;;
        -k) keeps="$keeps $2" ;;
        -c) if has_compiler; then keeps="$keeps $2"; fi ;;
        *) echo "slim.sh: unknown option $1 (-r NAME, -d, -f, -k or -c PATTERN)" >&2; exit 2 ;;
    esac
    shift 2
done
apply
# One walk of DIR for every rule, and du over what it found only (a find per pattern and du over all of DIR twice
# walked it ~19 times: 1.3 s of a +1 package rebuild whose layer adds one small package, docs/benchmarks.md). Words
# split on purpose: patterns hold no spaces, globbing is off.
found=$(mktemp)
# shellcheck disable=SC2086
[ -z "$expression" ] || (cd "$dir" && find . $expression) > "$found"
kb=$(cd "$dir" && xargs -0 -r du -sk < "$found" | awk '{ kb += $1 } END { print kb + 0 }')
(cd "$dir" && xargs -0 -r rm -rf < "$found")
rm -f "$found"
echo "envgen: left out of $dir what nothing loads at runtime: $(( kb / 1024 )) MB (leave_out.yaml)${compiler:+; a compiler in the image: $compiler}"

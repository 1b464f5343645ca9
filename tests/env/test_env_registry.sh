#!/bin/bash
# The one registry of environment variables (src/core/env.c): nothing else in
# src/ calls getenv, `gpureduce --help-env` lists every entry, and
# docs/ENVIRONMENT.md documents each of them.
set -u
: "${GPUREDUCE:?}" "${GR_SRC:?}"
fail=0
others=$(grep -rnE '\bgetenv[[:space:]]*\(' "$GR_SRC/src" --include='*.c' --include='*.h' --include='*.cu' |
         grep -v '^[^:]*src/core/env\.c:' | grep -v '^[^:]*:[0-9]*: \*')
if [ -n "$others" ]; then
    echo "FAIL: getenv outside src/core/env.c (read through gr_env()):"
    echo "$others"
    fail=1
fi
names=$("$GPUREDUCE" --help-env | awk 'NR > 1 { print $1 }')
[ "$(echo "$names" | wc -l)" -ge 10 ] || { echo "FAIL: --help-env lists too few variables: $names"; fail=1; }
for v in $names; do
    grep -q "\`$v\`" "$GR_SRC/docs/ENVIRONMENT.md" || { echo "FAIL: $v is not in docs/ENVIRONMENT.md"; fail=1; }
done
# every GR_ variable the docs table names is in the registry
for v in $(grep -o '^| `GR_[A-Z_]*`' "$GR_SRC/docs/ENVIRONMENT.md" | tr -d '|` '); do
    echo "$names" | grep -qx "$v" || { echo "FAIL: docs/ENVIRONMENT.md lists $v, the registry does not"; fail=1; }
done
[ $fail -eq 0 ] && echo "env registry: $(echo "$names" | wc -l) variables, all documented, read in one place"
exit $fail

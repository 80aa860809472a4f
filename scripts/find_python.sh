#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Print the path of a working CPython X.Y interpreter: find_python.sh 3.13
# Tries, in order: $PYTHON<XY> (e.g. PYTHON313=/opt/py/bin/python3.13), pythonX.Y on the PATH,
# pyenv's installs (its shim refuses to run unless the version is selected), /usr/bin,
# /usr/local/bin. Prints nothing and exits 1 if none runs and reports version X.Y.
set -u
want="${1:?usage: find_python.sh X.Y}"
major="${want%%.*}" minor="${want#*.}"
override_var="PYTHON${major}${minor}"

works() {  # works CMD... : CMD is Python $want; print its real executable
    "$@" -c "import sys; sys.exit(sys.version_info[:2] != ($major, $minor))" >/dev/null 2>&1 &&
        "$@" -c 'import sys; print(sys.executable)'
}

candidates=()
[ -n "${!override_var:-}" ] && candidates+=("${!override_var}")
candidates+=("python$want")
if root="$(pyenv root 2>/dev/null)"; then
    for dir in "$root"/versions/"$want".*/ "$root"/versions/"$want"/; do
        [ -x "$dir/bin/python$want" ] && candidates+=("$dir/bin/python$want")
    done
fi
candidates+=("/usr/bin/python$want" "/usr/local/bin/python$want")

for exe in "${candidates[@]}"; do
    works "$exe" && exit 0
done
echo "find_python.sh: no Python $want found (tried ${candidates[*]}); set $override_var=/path/to/python$want" >&2
exit 1

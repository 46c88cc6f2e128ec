#!/usr/bin/env bash
# The wheel as a user gets it (`make test-wheel`): installed into a fresh venv in a temporary
# folder outside the checkout, its commands run from that folder. They must find the profiles and
# studies the wheel carries, never the checkout's (which exists on the machine that built it: the
# native loader's own fallback points there, so a wheel that forgot its data would still pass
# here without the check below).
#
#   scripts/test-wheel.sh WHEEL
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	echo "usage: scripts/test-wheel.sh WHEEL (a nicbench-*.whl built by maturin build)" >&2
	exit 2
fi
wheel=$(realpath "$1")
checkout=$(realpath "$(dirname "$0")/..")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nicbench-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The checkout's overrides would hide what the wheel carries.
unset NICBENCH_PROFILES NICBENCH_STUDIES VIRTUAL_ENV PYTHONPATH

step() { echo "test-wheel: [${SECONDS}s] $*"; }

step "a fresh venv in $tmp, the wheel and its dependencies"
python3 -m venv "$tmp/venv"
# The dependencies at the versions the tests use (requirements/dev.lock as constraints: the pip
# cache has them), not whatever is newest today. --no-compile: byte-compiling all of pandas,
# matplotlib and pyarrow took 40 of the install's 60 s; the commands compile what they import.
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-compile -c "$checkout/requirements/dev.lock" "$wheel"
nicbench="$tmp/venv/bin/nicbench"
cd "$tmp"

step "nicbench finds its data in the installed package"
"$tmp/venv/bin/python" - "$tmp/venv" <<'EOF'
import sys
from pathlib import Path

import nicbench
from nicbench import data_files, profiles
from nicbench.vocab.study import default_studies_dir

venv = Path(sys.argv[1]).resolve()
for what, path in [
    ("package", Path(nicbench.__file__)),
    ("profiles", profiles.profiles_dir()),  # what the native loader uses
    ("studies", default_studies_dir()),
    ("packaged studies", data_files.studies()),
]:
    if not path.resolve().is_relative_to(venv):
        sys.exit(f"test-wheel: {what} are read from {path}, not from the installed wheel in {venv}")
if not profiles.names():
    sys.exit("test-wheel: the wheel carries no profiles")
EOF

step "simulate"
"$nicbench" simulate --nic connectx5 --gen flows=1000,size=1500,rate=10Gbps --duration 10ms

step "reproduce offpath"
"$nicbench" reproduce offpath --results "$tmp/results" --reports "$tmp/reports" > "$tmp/reproduce.txt"
tail -n 3 "$tmp/reproduce.txt"
test -f "$tmp/reports/offpath/index.html"

step "check a packaged spec by name"
"$nicbench" check pam21/fig2a

step "an unknown spec name: one line naming the study's specs, exit 2"
set +e
"$nicbench" check pam21/nope 2> "$tmp/err.txt"
rc=$?
set -e
cat "$tmp/err.txt"
if [ "$rc" -ne 2 ] || [ "$(wc -l < "$tmp/err.txt")" -ne 1 ] || ! grep -q "^nicbench: error: .*fig2a" "$tmp/err.txt"; then
	echo "test-wheel: expected exit 2 and one 'nicbench: error:' line naming pam21's specs, got exit $rc" >&2
	exit 1
fi
step "ok"

#!/usr/bin/env bash
# Run the cargo-fuzz targets for a while (not part of CI: needs nightly + libFuzzer).
#   scripts/fuzz.sh [TARGET] [SECONDS]    TARGET: parse_frame | pcap_reader | rule_syntaxes | all (default)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
target=${1:-all}
secs=${2:-60}
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is missing: cargo install cargo-fuzz (and rustup toolchain install nightly)" >&2
    exit 2
fi
targets=(parse_frame pcap_reader rule_syntaxes)
[ "$target" = all ] || targets=("$target")
for t in "${targets[@]}"; do
    echo "== fuzzing $t for ${secs}s"
    cargo +nightly fuzz run "$t" -- -max_total_time="$secs"
done

#!/usr/bin/env bash
# Run the fuzz targets for a while (not part of CI), one after another on one core (one fuzz
# process: -jobs=1 -workers=1; the machine is shared with builds).
#   scripts/fuzz.sh [TARGET] [SECONDS]    TARGET: one of RUST_TARGETS or PYTHON_TARGETS, or all (default)
# Rust targets (fuzz/fuzz_targets): cargo-fuzz, needs a nightly toolchain and `cargo install cargo-fuzz`.
# Python targets (fuzz/python): atheris in .venv (`make develop`, then `.venv/bin/pip install atheris`).
# An empty corpus is seeded from the repo's own files of that format (see seed()).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target=${1:-all}
secs=${2:-60}
RUST_TARGETS=(parse_frame pcap_reader rule_syntaxes pcapng_options openflow_file profile_toml pvp_megaflows)
PYTHON_TARGETS=(experiment_spec measurements_csv megaflow_json)

# Seed corpus/$1 from the repo's files of the format the target reads (once: a corpus that has
# inputs keeps them). Flat names: studies' specs share file names (fig7.toml).
seed() {
    local dir="$root/fuzz/corpus/$1" f
    mkdir -p "$dir"
    [ -z "$(ls -A "$dir")" ] || return 0
    case $1 in
        profile_toml) cp "$root"/profiles/*.toml "$dir"/ ;;
        experiment_spec)
            for f in "$root"/experiments/*.toml "$root"/studies/*/experiments/*.toml; do
                cp "$f" "$dir/$(echo "${f#"$root"/}" | tr / _)"
            done ;;
        openflow_file)
            cp "$root"/crates/nicbench-rules/tests/corpus/*.of "$dir"/
            grep -hv '^#' "$root"/crates/nicbench-rules/tests/corpus/openflow_valid.of | split -l 1 - "$dir/line-" ;;
        measurements_csv | megaflow_json | pcapng_options)
            # The robustness suite's and the regression files (fixtures/fuzz); pcapng_options reads
            # its bytes as choices, any seed will do.
            cp "$root"/python/tests/fixtures/fuzz/* "$dir"/
            printf 'experiment,groups,rules,metric,value\npam21-fig2b,1,100000,rx_gbps,80\n' >"$dir/tidy.csv"
            printf 'figure,nic,panel,series,x,x_nominal,x_unit,y,y_unit\n2,mlnx-cx5,2a,Table 0,995.98,1000,rules,98.86,Gbps\n' >"$dir/digitized.csv"
            echo '{"masks": [{"ingress": "uplink", "megaflows": 16384, "offloaded": 16384, "decap": false, "encap": false}, {"ingress": "vf", "megaflows": 16384, "offloaded": 16000, "decap": false, "encap": true}]}' >"$dir/pvp.json" ;;
        pvp_megaflows) seed megaflow_json && cp "$root"/fuzz/corpus/megaflow_json/* "$dir"/ ;;
    esac
}

run() {
    local t=$1
    echo "== fuzzing $t for ${secs}s"
    seed "$t"
    if [[ " ${PYTHON_TARGETS[*]} " == *" $t "* ]]; then
        local dict=()
        [ -f "$root/fuzz/python/$t.dict" ] && dict=("-dict=$root/fuzz/python/$t.dict")
        # atheris re-runs argv[0] as a command under -jobs, so one process without it (still one core).
        (cd "$root/fuzz/python" && "$root/.venv/bin/python" "$t.py" "$root/fuzz/corpus/$t" "${dict[@]}" \
            -max_total_time="$secs")
    else
        (cd "$root/fuzz" && cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -jobs=1 -workers=1)
    fi
}

targets=("${RUST_TARGETS[@]}" "${PYTHON_TARGETS[@]}")
[ "$target" = all ] || targets=("$target")
for t in "${targets[@]}"; do
    if [[ " ${PYTHON_TARGETS[*]} " == *" $t "* ]]; then
        "$root/.venv/bin/python" -c 'import atheris' 2>/dev/null ||
            { echo "atheris is missing: make develop, then .venv/bin/pip install atheris" >&2; exit 2; }
    elif [[ " ${RUST_TARGETS[*]} " == *" $t "* ]]; then
        cargo fuzz --version >/dev/null 2>&1 ||
            { echo "cargo-fuzz is missing: cargo install cargo-fuzz (and rustup toolchain install nightly)" >&2; exit 2; }
    else
        echo "no fuzz target '$t' (targets: ${RUST_TARGETS[*]} ${PYTHON_TARGETS[*]}, all)" >&2
        exit 2
    fi
done
for t in "${targets[@]}"; do
    run "$t"
done

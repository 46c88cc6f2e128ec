#!/usr/bin/env bash
# Install the real peer tools that tests and benchmarks compare nicbench against, from
# Debian's packages (bookworm).
#
# Outside CI: best effort. A tool that cannot be installed is reported, the script exits 0,
# and the tests that need it skip with a message naming it.
# Under CI=true: a peer that did not end up installed is an error. The script installs what it
# can, then exits 1 naming every package still missing, as the tests would fail without them.
set -u

# Each peer: the Debian package, then the commands that must be on PATH once it is installed.
peers=(
    "tcpdump:tcpdump"
    "dpdk-dev:dpdk-testpmd dpdk-test-acl dpdk-test-flow-perf"
    "pkgconf:pkg-config"
    "chromium:chromium"
    # Flow-meter peers (issue 6): Argus (server: argus; client: ra, racluster) and nfdump.
    "argus-server:argus"
    "argus-client:ra racluster"
    "nfdump:nfcapd nfpcapd nfdump"
    # Open vSwitch (issue 16): ovs-ofctl/ovs-appctl/ovs-vsctl come with openvswitch-common,
    # which openvswitch-switch depends on. Tests run their own private daemons; the system
    # service is kept from starting by the policy-rc.d guard below.
    "openvswitch-switch:ovs-vswitchd ovsdb-server ovsdb-tool ovs-vsctl ovs-ofctl ovs-appctl"
)
# The DPDK headers the Toeplitz oracle compiles against (dpdk-dev pulls libdpdk-dev in).
dpdk_header=/usr/include/dpdk/rte_thash.h

ci=0
[ "${CI:-}" = "true" ] && ci=1

# Prints the packages among "$@" (package:commands entries) with a command or file missing.
missing_packages() {
    local entry pkg cmds cmd
    for entry in "$@"; do
        pkg=${entry%%:*}
        cmds=${entry#*:}
        for cmd in $cmds; do
            if ! command -v "$cmd" >/dev/null 2>&1; then
                echo "$pkg"
                continue 2
            fi
        done
        if [ "$pkg" = dpdk-dev ] && [ ! -f "$dpdk_header" ]; then
            echo "$pkg"
        fi
    done
}

mapfile -t want < <(missing_packages "${peers[@]}")
if [ ${#want[@]} -eq 0 ]; then
    echo "install-peers: all peer tools present"
    exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-peers: not root or no apt-get; cannot install: ${want[*]}" >&2
else
    echo "install-peers: installing ${want[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Keep package post-install scripts from starting daemons (argus, nfdump, Open vSwitch's
    # ovsdb-server and ovs-vswitchd, ...).
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && created_policy=1
    fi
    apt-get update -qq >/dev/null 2>&1 || echo "install-peers: apt-get update failed" >&2
    for pkg in "${want[@]}"; do
        if ! apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1; then
            echo "install-peers: could not install $pkg" >&2
        fi
    done
    [ "$created_policy" = 1 ] && rm -f "$policy"
fi

# What is still missing after the attempt (a package can install yet lack a command).
mapfile -t still < <(missing_packages "${peers[@]}")
if [ ${#still[@]} -eq 0 ]; then
    echo "install-peers: all peer tools present"
    exit 0
fi
if [ "$ci" = 1 ]; then
    echo "install-peers: error: peer packages not installed: ${still[*]} (CI=true: the tests that need them would fail)" >&2
    exit 1
fi
echo "install-peers: missing ${still[*]}: the tests that need them will skip (under CI=true they fail)" >&2
exit 0

#!/usr/bin/env bash
# Install the real peer tools that tests and benchmarks compare nicbench against,
# from Debian's packages. Best effort: a tool that cannot be installed is reported
# and the tests that need it skip with a message naming it.
set -u
want=()
command -v tcpdump >/dev/null 2>&1 || want+=(tcpdump)
command -v dpdk-testpmd >/dev/null 2>&1 || want+=(dpdk-dev)
command -v chromium >/dev/null 2>&1 || want+=(chromium)
# Flow-meter peers (issue 6): Argus (server: argus; client: ra, racluster) and nfdump (nfcapd, nfpcapd, nfdump).
command -v argus >/dev/null 2>&1 || want+=(argus-server)
{ command -v ra && command -v racluster; } >/dev/null 2>&1 || want+=(argus-client)
{ command -v nfcapd && command -v nfpcapd && command -v nfdump; } >/dev/null 2>&1 || want+=(nfdump)
if [ ${#want[@]} -eq 0 ]; then
    echo "install-peers: all peer tools present"
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-peers: not root or no apt-get; missing: ${want[*]} (tests using them will skip)" >&2
    exit 0
fi
echo "install-peers: installing ${want[*]}"
export DEBIAN_FRONTEND=noninteractive
# Keep package post-install scripts from starting daemons (argus, nfdump, ...).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && created_policy=1
fi
apt-get update -qq >/dev/null 2>&1 || echo "install-peers: apt-get update failed" >&2
for pkg in "${want[@]}"; do
    apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 \
        || echo "install-peers: could not install $pkg (tests using it will skip)" >&2
done
[ "$created_policy" = 1 ] && rm -f "$policy"
exit 0

/* Toeplitz oracle: DPDK's own software RSS (rte_softrss from rte_thash.h, DPDK 22.11),
 * driven line by line from stdin by rss_vs_dpdk.rs. Tuples are built the way DPDK
 * applications build them (host-order fields; IPv6 addresses through
 * rte_thash_load_v6_addrs), so the input layout is checked as well as the hash.
 *
 *   k HEX                  set the key (bytes, a multiple of 4, at most 128)
 *   4 SRC DST SPORT DPORT  IPv4 (addresses as host-order u32): prints "L4 L3" hashes
 *   6 SRC DST SPORT DPORT  IPv6 (addresses as 32 hex digits):   prints "L4 L3" hashes
 *   r HEX                  raw input (a multiple of 4 bytes, big-endian words): prints the hash
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rte_thash.h>

static uint8_t key[128] __attribute__((aligned(4)));

static int hex_bytes(const char *hex, uint8_t *out, size_t max) {
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > max) return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return -1;
        out[i] = (uint8_t)v;
    }
    return (int)(n / 2);
}

int main(void) {
    char line[1024], hex_a[300], hex_b[300];
    unsigned long a, b;
    unsigned sport, dport;
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == 'k' && sscanf(line, "k %299s", hex_a) == 1) {
            memset(key, 0, sizeof key);
            if (hex_bytes(hex_a, key, sizeof key) < 0) { fprintf(stderr, "bad key: %s", line); return 2; }
        } else if (line[0] == '4' && sscanf(line, "4 %lu %lu %u %u", &a, &b, &sport, &dport) == 4) {
            union rte_thash_tuple t;
            memset(&t, 0, sizeof t);
            t.v4.src_addr = (uint32_t)a;
            t.v4.dst_addr = (uint32_t)b;
            t.v4.sport = (uint16_t)sport;
            t.v4.dport = (uint16_t)dport;
            printf("%08x %08x\n", rte_softrss((uint32_t *)&t, RTE_THASH_V4_L4_LEN, key),
                   rte_softrss((uint32_t *)&t, RTE_THASH_V4_L3_LEN, key));
        } else if (line[0] == '6' && sscanf(line, "6 %299s %299s %u %u", hex_a, hex_b, &sport, &dport) == 4) {
            struct rte_ipv6_hdr ip;
            union rte_thash_tuple t;
            memset(&ip, 0, sizeof ip);
            memset(&t, 0, sizeof t);
            if (hex_bytes(hex_a, ip.src_addr, 16) != 16 || hex_bytes(hex_b, ip.dst_addr, 16) != 16) {
                fprintf(stderr, "bad IPv6 line: %s", line);
                return 2;
            }
            rte_thash_load_v6_addrs(&ip, &t);
            t.v6.sport = (uint16_t)sport;
            t.v6.dport = (uint16_t)dport;
            printf("%08x %08x\n", rte_softrss((uint32_t *)&t, RTE_THASH_V6_L4_LEN, key),
                   rte_softrss((uint32_t *)&t, RTE_THASH_V6_L3_LEN, key));
        } else if (line[0] == 'r' && sscanf(line, "r %299s", hex_a) == 1) {
            uint8_t bytes[128];
            uint32_t words[32];
            int n = hex_bytes(hex_a, bytes, sizeof bytes);
            if (n < 0 || n % 4) { fprintf(stderr, "bad raw input: %s", line); return 2; }
            for (int j = 0; j < n / 4; j++)
                words[j] = (uint32_t)bytes[4 * j] << 24 | (uint32_t)bytes[4 * j + 1] << 16 |
                           (uint32_t)bytes[4 * j + 2] << 8 | bytes[4 * j + 3];
            printf("%08x\n", rte_softrss(words, (uint32_t)(n / 4), key));
        } else {
            fprintf(stderr, "unknown line: %s", line);
            return 2;
        }
    }
    return 0;
}

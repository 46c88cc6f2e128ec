//! Toeplitz RSS against DPDK's own software implementation (`rte_softrss`, DPDK 22.11's
//! `rte_thash.h`), compiled from `thash_oracle.c` with the system C compiler and the
//! `dpdk-dev` headers. DPDK builds its tuples from host-order fields (and IPv6 addresses
//! through `rte_thash_load_v6_addrs`), so this checks nicbench's input layout — address,
//! address, source port, destination port — as well as the hash, for IPv4 and IPv6, with and
//! without ports, on the usual keys and random ones. Missing peers fail under CI=true and skip
//! with the reason otherwise (nicbench-testenv).

use nicbench_wire::rss::{hash_flow, RssFields, Toeplitz, MICROSOFT_KEY, SYMMETRIC_KEY, SYMMETRIC_KEY_52};
use nicbench_wire::FlowKey;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const TEST: &str = "rss_vs_dpdk";

/// splitmix64: a fixed, dependency-free stream of test inputs (seeded, same on every machine).
struct Inputs(u64);
impl Inputs {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compiles the oracle; `None` (after [`nicbench_testenv::missing`]) without a compiler or DPDK.
fn build_oracle() -> Option<PathBuf> {
    let cc = nicbench_testenv::tool_or_skip(TEST, "cc", "gcc")?;
    let pkg_config = nicbench_testenv::tool_or_skip(TEST, "pkg-config", "pkgconf")?;
    let cflags = Command::new(pkg_config)
        .args(["--cflags", "libdpdk"])
        .output()
        .expect("run pkg-config");
    if !cflags.status.success() {
        nicbench_testenv::missing(
            TEST,
            "DPDK headers: `pkg-config --cflags libdpdk` failed (Debian package dpdk-dev)",
        );
        return None;
    }
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/integration/thash_oracle.c");
    let exe = std::env::temp_dir().join(format!("nicbench_thash_oracle_{}", std::process::id()));
    let out = Command::new(cc)
        .args(
            String::from_utf8(cflags.stdout)
                .expect("pkg-config output")
                .split_whitespace(),
        )
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .expect("run cc");
    // The headers are there: a build failure is a broken oracle, never a skip.
    assert!(
        out.status.success(),
        "compiling {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

/// Runs the oracle on `script`, returns its output lines.
fn run_oracle(exe: &PathBuf, script: &str) -> Vec<String> {
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start oracle");
    let mut stdin = child.stdin.take().expect("stdin");
    let script = script.to_owned();
    // Written from another thread: the oracle's output would fill the pipe otherwise.
    let writer = std::thread::spawn(move || stdin.write_all(script.as_bytes()).expect("write to oracle"));
    let out = child.wait_with_output().expect("oracle output");
    writer.join().expect("writer");
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("oracle output")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn flow(src: IpAddr, dst: IpAddr, proto: u8, src_port: u16, dst_port: u16) -> FlowKey {
    FlowKey {
        src,
        dst,
        proto,
        src_port,
        dst_port,
        vlan: None,
        vni: None,
    }
}

/// Microsoft's first IPv4 vector ("Verifying the RSS Hash Calculation"):
/// 66.9.149.187:2794 -> 161.142.100.80:1766, hashes with and without ports.
const MICROSOFT_V4_LINE: &str = "4 1107924411 2710463568 2794 1766";
const MICROSOFT_V4_HASHES: &str = "51ccc178 323e8fc2";

#[test]
fn toeplitz_matches_dpdk_rte_softrss() {
    let Some(exe) = build_oracle() else { return };
    let mut rng = Inputs(0x7e57_0001);
    let mut keys: Vec<Vec<u8>> = vec![
        MICROSOFT_KEY.to_vec(),
        SYMMETRIC_KEY.to_vec(),
        SYMMETRIC_KEY_52.to_vec(),
    ];
    keys.extend([rng.bytes(40), rng.bytes(52), rng.bytes(40)]);
    const FLOWS_PER_KEY: usize = 400;
    const RAW_CASES: usize = 300;

    // The oracle first computes the published vector (it is the oracle it claims to be), then
    // every key's flows, each as IPv4 (TCP) and as IPv6 (UDP), then raw inputs of every length
    // under keys of every length (multiples of 4 bytes: rte_softrss reads the key by words).
    let mut script = format!("k {}\n{MICROSOFT_V4_LINE}\n", hex(&MICROSOFT_KEY));
    let mut expected = vec![MICROSOFT_V4_HASHES.to_owned()];
    for key in &keys {
        let toeplitz = Toeplitz::new(key).unwrap();
        script.push_str(&format!("k {}\n", hex(key)));
        for _ in 0..FLOWS_PER_KEY {
            let (a, b) = (rng.next() as u32, rng.next() as u32);
            let (sp, dp) = (rng.next() as u16, rng.next() as u16);
            let v4 = flow(Ipv4Addr::from(a).into(), Ipv4Addr::from(b).into(), 6, sp, dp);
            script.push_str(&format!("4 {a} {b} {sp} {dp}\n"));
            expected.push(format!(
                "{:08x} {:08x}",
                hash_flow(&toeplitz, &v4, RssFields::IpPorts),
                hash_flow(&toeplitz, &v4, RssFields::Ip)
            ));
            let a6 = Ipv6Addr::from(((rng.next() as u128) << 64) | rng.next() as u128);
            let b6 = Ipv6Addr::from(((rng.next() as u128) << 64) | rng.next() as u128);
            let v6 = flow(a6.into(), b6.into(), 17, sp, dp);
            script.push_str(&format!("6 {} {} {sp} {dp}\n", hex(&a6.octets()), hex(&b6.octets())));
            expected.push(format!(
                "{:08x} {:08x}",
                hash_flow(&toeplitz, &v6, RssFields::IpPorts),
                hash_flow(&toeplitz, &v6, RssFields::Ip)
            ));
        }
    }
    for _ in 0..RAW_CASES {
        let key_words = 2 + (rng.next() % 31) as usize; // 8..=128 bytes
        let input_words = 1 + (rng.next() % (key_words as u64 - 1)) as usize; // up to key - 4 bytes
        let (key, input) = (rng.bytes(4 * key_words), rng.bytes(4 * input_words));
        script.push_str(&format!("k {}\nr {}\n", hex(&key), hex(&input)));
        expected.push(format!("{:08x}", Toeplitz::new(&key).unwrap().hash(&input)));
    }
    let got = run_oracle(&exe, &script);
    let _ = std::fs::remove_file(&exe);
    assert_eq!(got.len(), expected.len(), "one answer per tuple");
    assert_eq!(
        got[0], MICROSOFT_V4_HASHES,
        "the oracle computes Microsoft's published vector"
    );
    let mismatches: Vec<String> = script
        .lines()
        .filter(|l| !l.starts_with('k'))
        .zip(got.iter().zip(&expected))
        .filter(|(_, (g, e))| g != e)
        .map(|(line, (g, e))| format!("{line}: DPDK {g}, nicbench {e}"))
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} inputs differ:\n{}",
        mismatches.len(),
        expected.len(),
        mismatches[..mismatches.len().min(10)].join("\n")
    );
}

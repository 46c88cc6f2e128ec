//! Live capture from a Linux interface: an `AF_PACKET` raw socket bound to
//! one interface, read with a 100 ms receive timeout so timeouts also run on
//! wall time when no packets arrive.
//!
//! Timestamps are the wall clock at receive. On a loopback device every
//! packet is seen twice (outgoing and incoming); the outgoing copy is
//! skipped, as libpcap does, so each packet counts once. `orig_len` is the
//! real frame length (`MSG_TRUNC`), `data` at most the buffer (256 KiB).

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::MeterConfig;
use crate::error::FlowError;
use crate::packet::L2;
use crate::run::{drive, Next, RawFrame, Source};
use crate::sink::FlowSink;
use crate::stats::{Progress, RunStats};

const RECV_TIMEOUT: Duration = Duration::from_millis(100);
const BUFFER_BYTES: usize = 256 * 1024;
const ETH_P_ALL: u16 = 0x0003;
const ARPHRD_ETHER: u16 = 1;
const ARPHRD_LOOPBACK: u16 = 772;
/// Devices without a link-layer header (tun, wireguard): raw IP.
const ARPHRD_NONE: u16 = 0xfffe;
const ARPHRD_IPGRE: u16 = 778;

struct LiveInput {
    fd: OwnedFd,
    iface: String,
    buf: Vec<u8>,
    deadline: Option<Instant>,
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl LiveInput {
    fn open(iface: &str, duration: Option<Duration>) -> Result<LiveInput, FlowError> {
        let live_err = |reason: String| FlowError::Live {
            iface: iface.to_string(),
            reason,
        };
        let name = CString::new(iface).map_err(|_| live_err("interface name contains NUL".into()))?;
        // SAFETY: `name` is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(live_err("no such interface".into()));
        }
        // Protocol 0: the socket receives nothing until bind() names the interface and ETH_P_ALL.
        // Opening it with ETH_P_ALL would capture every interface until the bind, and the bind
        // re-registers the hook, leaving a window in which packets on `iface` are missed.
        // SAFETY: plain socket(2) call; the result is checked.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            let err = std::io::Error::last_os_error();
            let hint = if err.raw_os_error() == Some(libc::EPERM) {
                " (needs root or CAP_NET_RAW)"
            } else {
                ""
            };
            return Err(live_err(format!("cannot open AF_PACKET socket: {err}{hint}")));
        }
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid start.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = ETH_P_ALL.to_be();
        addr.sll_ifindex = ifindex as i32;
        // SAFETY: `addr` is a valid sockaddr_ll and the length matches it.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                std::ptr::addr_of!(addr).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if rc != 0 {
            return Err(live_err(format!("cannot bind: {}", std::io::Error::last_os_error())));
        }
        let timeout = libc::timeval {
            tv_sec: 0,
            tv_usec: RECV_TIMEOUT.as_micros() as libc::suseconds_t,
        };
        // SAFETY: SO_RCVTIMEO takes a timeval of this size.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                std::ptr::addr_of!(timeout).cast(),
                std::mem::size_of::<libc::timeval>() as u32,
            )
        };
        if rc != 0 {
            return Err(live_err(format!(
                "cannot set receive timeout: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(LiveInput {
            fd,
            iface: iface.to_string(),
            buf: vec![0; BUFFER_BYTES],
            deadline: duration.map(|d| Instant::now() + d),
        })
    }
}

impl Source for LiveInput {
    fn next(&mut self) -> Result<Next<'_>, FlowError> {
        loop {
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(Next::End);
            }
            // SAFETY: as in `open`.
            let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut addr_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: the buffer and address are valid for the lengths given.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    libc::MSG_TRUNC,
                    std::ptr::addr_of_mut!(addr).cast(),
                    &mut addr_len,
                )
            };
            if n < 0 {
                let err = std::io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => return Ok(Next::Idle(now_ns())),
                    _ => {
                        return Err(FlowError::Live {
                            iface: self.iface.clone(),
                            reason: format!("receive: {err}"),
                        })
                    }
                }
            }
            if addr.sll_pkttype == libc::PACKET_OUTGOING && addr.sll_hatype == ARPHRD_LOOPBACK {
                continue;
            }
            let orig_len = n as usize;
            let caplen = orig_len.min(self.buf.len());
            let l2 = match addr.sll_hatype {
                ARPHRD_ETHER | ARPHRD_LOOPBACK => Some(L2::Ethernet),
                ARPHRD_NONE | ARPHRD_IPGRE => Some(L2::Ip(0)),
                _ => Some(L2::Ethernet),
            };
            return Ok(Next::Frame(RawFrame {
                ts_ns: now_ns(),
                orig_len: u32::try_from(orig_len).unwrap_or(u32::MAX),
                data: &self.buf[..caplen],
                l2,
            }));
        }
    }
}

/// Meters live traffic on `iface` until `stop` is set or `duration` elapses;
/// then every active flow is flushed. Needs root or CAP_NET_RAW.
pub fn run_live(
    iface: &str,
    duration: Option<Duration>,
    config: &MeterConfig,
    sink: &mut dyn FlowSink,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunStats, FlowError> {
    config.validate()?;
    let input = LiveInput::open(iface, duration)?;
    drive(input, config, sink, stop, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::CollectSink;
    use std::net::UdpSocket;

    /// Opens a capture on `iface`; without CAP_NET_RAW the test fails under
    /// `CI=true` and skips (saying why) elsewhere.
    fn open_or_skip(test: &str, iface: &str) -> Option<LiveInput> {
        match LiveInput::open(iface, None) {
            Ok(input) => Some(input),
            Err(FlowError::Live { reason, .. })
                if reason.contains("CAP_NET_RAW") || reason.contains("not permitted") =>
            {
                nicbench_testenv::missing(
                    test,
                    &format!("an AF_PACKET socket on {iface} needs root or CAP_NET_RAW: {reason}"),
                );
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    /// A live input that ends at its first receive timeout (100 ms without a
    /// packet): everything sent before the run started has been read by then.
    struct UntilQuiet(LiveInput);

    impl Source for UntilQuiet {
        fn next(&mut self) -> Result<Next<'_>, FlowError> {
            match self.0.next()? {
                Next::Idle(_) => Ok(Next::End),
                other => Ok(other),
            }
        }
    }

    #[test]
    fn test_unknown_interface_is_an_error() {
        let stop = AtomicBool::new(false);
        let err = run_live(
            "nosuchif0",
            Some(Duration::from_millis(10)),
            &MeterConfig::nicbench(),
            &mut CollectSink::default(),
            &stop,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(err.to_string().contains("no such interface"), "{err}");
    }

    #[test]
    fn test_live_loopback_counts_each_packet_once() {
        // The socket is bound before anything is sent: no packet can be missed.
        let Some(input) = open_or_skip("live::test_live_loopback_counts_each_packet_once", "lo") else {
            return;
        };
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = receiver.local_addr().unwrap().port();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..20 {
            sender.send_to(b"hello", ("127.0.0.1", port)).unwrap();
        }
        let src_port = sender.local_addr().unwrap().port();
        let config = MeterConfig {
            workers: 2,
            ..MeterConfig::nicbench()
        };
        let mut sink = CollectSink::default();
        let stats = drive(
            UntilQuiet(input),
            &config,
            &mut sink,
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        let ours: Vec<_> = sink
            .records
            .iter()
            .filter(|r| r.key.src_port == src_port && r.key.dst_port == port)
            .collect();
        assert_eq!(ours.len(), 1, "{:?}", sink.records);
        // 20 datagrams of 5 bytes: 14 + 20 + 8 + 5 = 47 bytes each, seen once.
        assert_eq!((ours[0].src_pkts, ours[0].src_bytes), (20, 20 * 47));
        assert!(!stats.interrupted);
        assert_eq!(stats.workers.len(), 2);
    }

    #[test]
    fn test_live_run_ends_at_its_duration() {
        if open_or_skip("live::test_live_run_ends_at_its_duration", "lo").is_none() {
            return;
        }
        let stats = run_live(
            "lo",
            Some(Duration::from_millis(50)),
            &MeterConfig::nicbench(),
            &mut CollectSink::default(),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        assert!(!stats.interrupted, "a run that reaches its duration is not interrupted");
        assert_eq!(stats.workers.len(), 1);
    }
}

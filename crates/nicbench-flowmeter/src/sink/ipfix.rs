//! IPFIX export (RFC 7011) over UDP, and a decoder for our own messages.
//!
//! Choices (documented in the contract):
//! - Each biflow record becomes up to two **uni-directional** IPFIX data
//!   records (one per direction that sent packets), which every collector —
//!   nfcapd included — reads as plain flows; RFC 5103 biflow elements are not
//!   used.
//! - Two templates: [`IPFIX_TEMPLATE_V4`] and [`IPFIX_TEMPLATE_V6`] with IANA
//!   elements sourceIPv4Address(8)/sourceIPv6Address(27),
//!   destinationIPv4Address(12)/destinationIPv6Address(28),
//!   sourceTransportPort(7), destinationTransportPort(11),
//!   protocolIdentifier(4), tcpControlBits(6, 2 B), flowStartMilliseconds(152),
//!   flowEndMilliseconds(153), packetDeltaCount(2, 8 B), octetDeltaCount(1, 8 B).
//!   Both directions carry the biflow record's start and end.
//! - Templates go out in the first message, then every 64 messages and at
//!   least every 10 s (UDP transport, RFC 7011 §8.4). Messages are at most
//!   [`IPFIX_MAX_MESSAGE_BYTES`]; no padding.
//! - The sequence number counts data records sent before the message (§3.1).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs, UdpSocket};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::FlowSink;
use crate::error::FlowError;
use crate::record::FlowRecord;

/// Largest message we send \[bytes\]: fits a 1500 B MTU with IP/UDP headers.
pub const IPFIX_MAX_MESSAGE_BYTES: usize = 1400;
pub const IPFIX_TEMPLATE_V4: u16 = 256;
pub const IPFIX_TEMPLATE_V6: u16 = 257;

const VERSION: u16 = 10;
const HEADER_BYTES: usize = 16;
const SET_HEADER_BYTES: usize = 4;
const TEMPLATE_SET_ID: u16 = 2;
const TEMPLATE_EVERY_MESSAGES: u64 = 64;
const TEMPLATE_EVERY_SECS: u64 = 10;

/// (information element id, length in bytes), after the two addresses.
const COMMON_FIELDS: [(u16, u16); 8] = [(7, 2), (11, 2), (4, 1), (6, 2), (152, 8), (153, 8), (2, 8), (1, 8)];
const COMMON_BYTES: usize = 2 + 2 + 1 + 2 + 8 + 8 + 8 + 8;
const V4_RECORD_BYTES: usize = 8 + COMMON_BYTES;
const V6_RECORD_BYTES: usize = 32 + COMMON_BYTES;

/// One uni-directional flow as carried in IPFIX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpfixFlow {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub proto: u8,
    pub tcp_flags: u16,
    pub start_ms: u64,
    pub end_ms: u64,
    pub packets: u64,
    pub octets: u64,
}

impl IpfixFlow {
    /// The uni-directional flows of a biflow record (directions without packets are left out).
    pub fn from_record(r: &FlowRecord) -> impl Iterator<Item = IpfixFlow> {
        let start_ms = r.first_ns / 1_000_000;
        let end_ms = r.last_ns / 1_000_000;
        let k = r.key;
        let forward = IpfixFlow {
            src: k.src,
            dst: k.dst,
            src_port: k.src_port,
            dst_port: k.dst_port,
            proto: k.proto,
            tcp_flags: r.src_tcp_flags.into(),
            start_ms,
            end_ms,
            packets: r.src_pkts,
            octets: r.src_bytes,
        };
        let reverse = IpfixFlow {
            src: k.dst,
            dst: k.src,
            src_port: k.dst_port,
            dst_port: k.src_port,
            tcp_flags: r.dst_tcp_flags.into(),
            packets: r.dst_pkts,
            octets: r.dst_bytes,
            ..forward
        };
        [forward, reverse].into_iter().filter(|f| f.packets > 0)
    }
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}
fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Builds IPFIX messages from flows; the caller sends them.
#[derive(Debug)]
pub struct IpfixEncoder {
    observation_domain: u32,
    /// Data records sent so far (the next message's sequence number).
    sequence: u32,
    messages: u64,
    last_template_at: Option<Instant>,
    v4: Vec<u8>,
    v6: Vec<u8>,
}

impl IpfixEncoder {
    pub fn new(observation_domain: u32) -> IpfixEncoder {
        IpfixEncoder {
            observation_domain,
            sequence: 0,
            messages: 0,
            last_template_at: None,
            v4: Vec::new(),
            v6: Vec::new(),
        }
    }

    fn templates_due(&self) -> bool {
        match self.last_template_at {
            None => true,
            Some(at) => self.messages % TEMPLATE_EVERY_MESSAGES == 0 || at.elapsed().as_secs() >= TEMPLATE_EVERY_SECS,
        }
    }

    fn template_set() -> Vec<u8> {
        let mut set = Vec::new();
        put_u16(&mut set, TEMPLATE_SET_ID);
        put_u16(&mut set, 0); // length, patched below
        for (id, src_ie, dst_ie, addr_len) in [(IPFIX_TEMPLATE_V4, 8u16, 12u16, 4u16), (IPFIX_TEMPLATE_V6, 27, 28, 16)]
        {
            put_u16(&mut set, id);
            put_u16(&mut set, 2 + COMMON_FIELDS.len() as u16);
            for (ie, len) in [(src_ie, addr_len), (dst_ie, addr_len)]
                .iter()
                .chain(COMMON_FIELDS.iter())
            {
                put_u16(&mut set, *ie);
                put_u16(&mut set, *len);
            }
        }
        let len = set.len() as u16;
        set[2..4].copy_from_slice(&len.to_be_bytes());
        set
    }

    /// Bytes the message would have with the pending records and the templates (if due).
    fn pending_bytes(&self, with_templates: bool) -> usize {
        let sets = |data: &Vec<u8>| {
            if data.is_empty() {
                0
            } else {
                SET_HEADER_BYTES + data.len()
            }
        };
        let templates = if with_templates { Self::template_set().len() } else { 0 };
        HEADER_BYTES + templates + sets(&self.v4) + sets(&self.v6)
    }

    /// Adds one flow; returns a finished message when the pending one is full.
    pub fn push(&mut self, flow: &IpfixFlow) -> Option<Vec<u8>> {
        let (is_v6, record_bytes) = match (flow.src, flow.dst) {
            (IpAddr::V4(_), IpAddr::V4(_)) => (false, V4_RECORD_BYTES),
            _ => (true, V6_RECORD_BYTES),
        };
        let new_set = if is_v6 { self.v6.is_empty() } else { self.v4.is_empty() };
        let extra = record_bytes + if new_set { SET_HEADER_BYTES } else { 0 };
        let mut done = None;
        if self.pending_bytes(self.templates_due()) + extra > IPFIX_MAX_MESSAGE_BYTES {
            done = self.take_message(unix_secs());
        }
        let data = if is_v6 { &mut self.v6 } else { &mut self.v4 };
        match (flow.src, flow.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                data.extend_from_slice(&s.octets());
                data.extend_from_slice(&d.octets());
            }
            (s, d) => {
                data.extend_from_slice(&to_v6(s).octets());
                data.extend_from_slice(&to_v6(d).octets());
            }
        }
        put_u16(data, flow.src_port);
        put_u16(data, flow.dst_port);
        data.push(flow.proto);
        put_u16(data, flow.tcp_flags);
        put_u64(data, flow.start_ms);
        put_u64(data, flow.end_ms);
        put_u64(data, flow.packets);
        put_u64(data, flow.octets);
        done
    }

    /// The pending records as one message (`None` when nothing is pending).
    pub fn take_message(&mut self, export_time_secs: u32) -> Option<Vec<u8>> {
        if self.v4.is_empty() && self.v6.is_empty() {
            return None;
        }
        let with_templates = self.templates_due();
        let mut msg = Vec::with_capacity(self.pending_bytes(with_templates));
        put_u16(&mut msg, VERSION);
        put_u16(&mut msg, 0); // length, patched below
        put_u32(&mut msg, export_time_secs);
        put_u32(&mut msg, self.sequence);
        put_u32(&mut msg, self.observation_domain);
        if with_templates {
            msg.extend_from_slice(&Self::template_set());
            self.last_template_at = Some(Instant::now());
        }
        let mut records = 0usize;
        for (id, data, record_bytes) in [
            (IPFIX_TEMPLATE_V4, &mut self.v4, V4_RECORD_BYTES),
            (IPFIX_TEMPLATE_V6, &mut self.v6, V6_RECORD_BYTES),
        ] {
            if data.is_empty() {
                continue;
            }
            records += data.len() / record_bytes;
            put_u16(&mut msg, id);
            put_u16(&mut msg, (SET_HEADER_BYTES + data.len()) as u16);
            msg.extend_from_slice(data);
            data.clear();
        }
        let len = msg.len() as u16;
        msg[2..4].copy_from_slice(&len.to_be_bytes());
        self.sequence = self.sequence.wrapping_add(records as u32);
        self.messages += 1;
        Some(msg)
    }
}

fn to_v6(a: IpAddr) -> Ipv6Addr {
    match a {
        IpAddr::V6(a) => a,
        IpAddr::V4(a) => a.to_ipv6_mapped(),
    }
}

fn unix_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

/// Exports records to an IPFIX collector over UDP.
#[derive(Debug)]
pub struct IpfixSink {
    socket: UdpSocket,
    collector: String,
    encoder: IpfixEncoder,
    /// Messages sent so far.
    pub messages_sent: u64,
    /// Sends that reported an ICMP port unreachable from the collector (nothing listening, for a
    /// while or for good); the message was sent again once, as UDP exporters carry on.
    pub messages_refused: u64,
}

impl IpfixSink {
    /// `collector` is `host:port`, e.g. `127.0.0.1:9995`.
    pub fn connect(collector: &str, observation_domain: u32) -> Result<IpfixSink, FlowError> {
        let ctx = |what: &str| format!("IPFIX collector {collector}: {what}");
        let addr = collector
            .to_socket_addrs()
            .map_err(|e| FlowError::io(ctx("bad address"), e))?
            .next()
            .ok_or_else(|| FlowError::Config(ctx("address resolves to nothing")))?;
        let bind = if addr.is_ipv6() { "[::]:0" } else { "0.0.0.0:0" };
        let socket = UdpSocket::bind(bind).map_err(|e| FlowError::io(ctx("cannot bind"), e))?;
        socket
            .connect(addr)
            .map_err(|e| FlowError::io(ctx("cannot connect"), e))?;
        Ok(IpfixSink {
            socket,
            collector: collector.to_string(),
            encoder: IpfixEncoder::new(observation_domain),
            messages_sent: 0,
            messages_refused: 0,
        })
    }

    /// A connected UDP socket reports an earlier datagram's ICMP port unreachable as the next
    /// send's ECONNREFUSED, and that send did not go out: it is counted and sent once more (IPFIX
    /// over UDP has no delivery guarantee, RFC 7011 §10.3; exporters keep exporting while the
    /// collector is down). Any other error, or a second refusal in a row, stops the run.
    fn send(&mut self, msg: &[u8]) -> Result<(), FlowError> {
        let sent = match self.socket.send(msg) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                self.messages_refused += 1;
                self.socket.send(msg)
            }
            other => other,
        };
        sent.map_err(|e| FlowError::io(format!("IPFIX collector {}: send", self.collector), e))?;
        self.messages_sent += 1;
        Ok(())
    }
}

impl FlowSink for IpfixSink {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        for flow in IpfixFlow::from_record(record) {
            if let Some(msg) = self.encoder.push(&flow) {
                self.send(&msg)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FlowError> {
        if let Some(msg) = self.encoder.take_message(unix_secs()) {
            self.send(&msg)?;
        }
        Ok(())
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("ipfix_messages_sent", self.messages_sent),
            ("ipfix_messages_refused", self.messages_refused),
        ]
    }
}

/// Decodes IPFIX messages (templates are remembered across messages). Knows
/// the elements our templates use; other elements are skipped by length.
#[derive(Debug, Default)]
pub struct IpfixDecoder {
    templates: HashMap<(u32, u16), Vec<(u16, u16)>>,
    /// Sequence number of the last message decoded.
    pub last_sequence: Option<u32>,
}

fn be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

impl IpfixDecoder {
    pub fn new() -> IpfixDecoder {
        IpfixDecoder::default()
    }

    pub fn decode(&mut self, msg: &[u8]) -> Result<Vec<IpfixFlow>, FlowError> {
        let bad = |why: &str| FlowError::Ipfix(why.to_string());
        let header = msg
            .get(..HEADER_BYTES)
            .ok_or_else(|| bad("shorter than the 16-byte header"))?;
        if be(&header[0..2]) != u64::from(VERSION) {
            return Err(bad("version is not 10"));
        }
        let len = be(&header[2..4]) as usize;
        if len != msg.len() {
            return Err(FlowError::Ipfix(format!(
                "length field {len} != message size {}",
                msg.len()
            )));
        }
        self.last_sequence = Some(be(&header[8..12]) as u32);
        let domain = be(&header[12..16]) as u32;
        let mut flows = Vec::new();
        let mut at = HEADER_BYTES;
        while at < msg.len() {
            let set_header = msg
                .get(at..at + SET_HEADER_BYTES)
                .ok_or_else(|| bad("truncated set header"))?;
            let set_id = be(&set_header[0..2]) as u16;
            let set_len = be(&set_header[2..4]) as usize;
            let body = msg
                .get(at + SET_HEADER_BYTES..at + set_len)
                .filter(|_| set_len >= SET_HEADER_BYTES)
                .ok_or_else(|| bad("bad set length"))?;
            if set_id == TEMPLATE_SET_ID {
                self.read_templates(domain, body)?;
            } else if set_id >= 256 {
                let fields = self
                    .templates
                    .get(&(domain, set_id))
                    .ok_or_else(|| FlowError::Ipfix(format!("data set {set_id} before its template")))?;
                let record_len: usize = fields.iter().map(|&(_, l)| usize::from(l)).sum();
                if record_len == 0 {
                    return Err(bad("empty template"));
                }
                // Trailing bytes shorter than a record are padding.
                for record in body.chunks_exact(record_len) {
                    flows.push(decode_record(fields, record));
                }
            }
            at += set_len;
        }
        Ok(flows)
    }

    fn read_templates(&mut self, domain: u32, mut body: &[u8]) -> Result<(), FlowError> {
        let bad = || FlowError::Ipfix("truncated template record".into());
        while body.len() >= 4 {
            let id = be(&body[0..2]) as u16;
            let count = be(&body[2..4]) as usize;
            let spec_bytes = body.get(4..4 + 4 * count).ok_or_else(bad)?;
            let fields = spec_bytes
                .chunks_exact(4)
                .map(|c| (be(&c[0..2]) as u16, be(&c[2..4]) as u16))
                .collect();
            self.templates.insert((domain, id), fields);
            body = &body[4 + 4 * count..];
        }
        Ok(())
    }
}

fn decode_record(fields: &[(u16, u16)], record: &[u8]) -> IpfixFlow {
    let mut flow = IpfixFlow {
        src: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        dst: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        src_port: 0,
        dst_port: 0,
        proto: 0,
        tcp_flags: 0,
        start_ms: 0,
        end_ms: 0,
        packets: 0,
        octets: 0,
    };
    let mut at = 0;
    for &(ie, len) in fields {
        let value = &record[at..at + usize::from(len)];
        at += usize::from(len);
        let addr = |v: &[u8]| -> IpAddr {
            match <[u8; 16]>::try_from(v) {
                Ok(b) => IpAddr::V6(Ipv6Addr::from(b)),
                Err(_) => IpAddr::V4(Ipv4Addr::from(be(v) as u32)),
            }
        };
        match ie {
            8 | 27 => flow.src = addr(value),
            12 | 28 => flow.dst = addr(value),
            7 => flow.src_port = be(value) as u16,
            11 => flow.dst_port = be(value) as u16,
            4 => flow.proto = be(value) as u8,
            6 => flow.tcp_flags = be(value) as u16,
            152 => flow.start_ms = be(value),
            153 => flow.end_ms = be(value),
            2 => flow.packets = be(value),
            1 => flow.octets = be(value),
            _ => {}
        }
    }
    flow
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::sample_record;

    #[test]
    fn test_message_layout_is_exact() {
        let mut enc = IpfixEncoder::new(7);
        let r = sample_record();
        for f in IpfixFlow::from_record(&r) {
            assert!(enc.push(&f).is_none());
        }
        let msg = enc.take_message(1_700_000_000).unwrap();
        // Header: version 10, length, export time, sequence 0, domain 7.
        assert_eq!(&msg[0..2], &[0, 10]);
        assert_eq!(be(&msg[2..4]) as usize, msg.len());
        assert_eq!(be(&msg[4..8]), 1_700_000_000);
        assert_eq!(be(&msg[8..12]), 0);
        assert_eq!(be(&msg[12..16]), 7);
        // Template set: id 2, two templates of 10 fields: 4 + 2 * (4 + 40) bytes.
        assert_eq!(be(&msg[16..18]), 2);
        assert_eq!(be(&msg[18..20]), 92);
        assert_eq!(&msg[20..28], &[1, 0, 0, 10, 0, 8, 0, 4]); // template 256, 10 fields, sourceIPv4Address/4
                                                              // Data set 256 with two 47-byte records.
        let data = 16 + 92;
        assert_eq!(be(&msg[data..data + 2]), 256);
        assert_eq!(be(&msg[data + 2..data + 4]) as usize, 4 + 2 * 47);
        assert_eq!(msg.len(), data + 4 + 2 * 47);
        assert_eq!(&msg[data + 4..data + 12], &[10, 0, 0, 1, 10, 0, 0, 2]);
        // Next message: sequence counts the 2 records, no templates yet.
        enc.push(&IpfixFlow::from_record(&r).next().unwrap());
        let msg2 = enc.take_message(1_700_000_001).unwrap();
        assert_eq!(be(&msg2[8..12]), 2);
        assert_eq!(be(&msg2[16..18]), 256);
    }

    #[test]
    fn test_round_trip_v4_v6_and_size_limit() {
        let mut enc = IpfixEncoder::new(1);
        let mut dec = IpfixDecoder::new();
        let r4 = sample_record();
        let mut r6 = sample_record();
        r6.key.src = "2001:db8::1".parse().unwrap();
        r6.key.dst = "2001:db8::2".parse().unwrap();
        r6.dst_pkts = 0;
        r6.dst_bytes = 0;
        let mut sent = Vec::new();
        let mut decoded = Vec::new();
        for i in 0..100u64 {
            let mut r = if i % 3 == 0 { r6 } else { r4 };
            r.src_pkts = i + 1;
            for f in IpfixFlow::from_record(&r) {
                sent.push(f);
                if let Some(msg) = enc.push(&f) {
                    assert!(msg.len() <= IPFIX_MAX_MESSAGE_BYTES);
                    let before = decoded.len() as u32;
                    decoded.extend(dec.decode(&msg).unwrap());
                    // The sequence number counts the data records of earlier messages.
                    assert_eq!(dec.last_sequence, Some(before));
                }
            }
        }
        decoded.extend(dec.decode(&enc.take_message(0).unwrap()).unwrap());
        // Sets are per template within a message, so compare as multisets.
        let key = |f: &IpfixFlow| {
            (
                f.src,
                f.dst,
                f.src_port,
                f.dst_port,
                f.packets,
                f.octets,
                f.tcp_flags,
                f.start_ms,
                f.end_ms,
                f.proto,
            )
        };
        let mut a: Vec<_> = sent.iter().map(key).collect();
        let mut b: Vec<_> = decoded.iter().map(key).collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        let v4_first = decoded
            .iter()
            .find(|f| f.src == r4.key.src && f.src_port == 40000)
            .unwrap();
        assert_eq!(
            (v4_first.start_ms, v4_first.end_ms),
            (1_700_000_000_000, 1_700_000_001_500)
        );
    }

    #[test]
    fn test_decoder_rejects_garbage_without_panicking() {
        let mut dec = IpfixDecoder::new();
        assert!(dec.decode(&[]).is_err());
        assert!(dec.decode(&[0, 9, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        let mut msg = vec![0, 10, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4];
        assert!(dec.decode(&msg).is_err(), "data set before template");
        msg[18..20].copy_from_slice(&[0, 99]);
        assert!(dec.decode(&msg).is_err(), "set length beyond message");
    }

    #[test]
    fn test_sink_sends_over_udp() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        receiver
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut sink = IpfixSink::connect(&receiver.local_addr().unwrap().to_string(), 3).unwrap();
        sink.write(&sample_record()).unwrap();
        sink.finish().unwrap();
        let mut buf = [0u8; 2048];
        let n = receiver.recv(&mut buf).unwrap();
        let flows = IpfixDecoder::new().decode(&buf[..n]).unwrap();
        assert_eq!(flows.len(), 2);
        assert_eq!(flows.iter().map(|f| f.packets).sum::<u64>(), 5);
        assert_eq!(flows.iter().map(|f| f.octets).sum::<u64>(), 500);
        assert_eq!(sink.messages_sent, 1);
    }

    #[test]
    fn test_sink_carries_on_when_nothing_listens() {
        let port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port(); // closed again
        let mut sink = IpfixSink::connect(&format!("127.0.0.1:{port}"), 3).unwrap();
        for _ in 0..3 {
            sink.send(&[0u8; 64])
                .expect("a refused datagram does not stop the export");
            // The host's ICMP port unreachable for this datagram, seen by the next send.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(sink.messages_sent, 3);
        assert_eq!(
            sink.messages_refused, 2,
            "the 2nd and 3rd sends found the previous refusal"
        );
        assert_eq!(
            sink.counters(),
            vec![("ipfix_messages_sent", 3), ("ipfix_messages_refused", 2)]
        );
    }
}

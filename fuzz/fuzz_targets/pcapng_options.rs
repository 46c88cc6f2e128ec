//! Structure-aware pcapng: the fuzzer's bytes choose well-framed blocks (section headers,
//! interface descriptions, enhanced/simple/obsolete packet blocks, name-resolution, statistics and
//! custom blocks) and the options inside them (codes the spec gives each block, with the right or
//! a wrong length, and arbitrary ones). Arbitrary bytes through `pcap_reader` rarely get past the
//! framing to the option parsing (pcap-file's, for section and interface blocks); here every
//! input does.
//!
//! Checks: no panic; packets, then at most one error (one line), then the end; each packet read
//! is one written (data, orig_len, interface), in order; packets of one link type written as
//! classic pcap (`PcapWriter`) read back the same (ts, orig_len, data).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use nicbench_pcap::{LinkType, PcapSource, PcapWriter, MAX_CAPLEN_BYTES};

/// Option codes the spec defines for a block type, with their value lengths (0: variable).
fn known_options(block_type: u32) -> &'static [(u16, usize)] {
    match block_type {
        // shb_hardware, shb_os, shb_userappl
        0x0a0d_0d0a => &[(2, 0), (3, 0), (4, 0)],
        // if_name .. if_hardware, if_txspeed, if_rxspeed
        1 => &[
            (2, 0),
            (3, 0),
            (4, 8),
            (5, 17),
            (6, 6),
            (7, 8),
            (8, 8),
            (9, 1),
            (10, 4),
            (11, 0),
            (12, 0),
            (13, 1),
            (14, 8),
            (15, 0),
            (16, 8),
            (17, 8),
        ],
        // epb_flags, epb_hash, epb_dropcount, epb_packetid, epb_queue, epb_verdict
        6 | 2 => &[(2, 4), (3, 0), (4, 8), (5, 8), (6, 4), (7, 0)],
        // ns_dnsname, ns_dnsIP4addr, ns_dnsIP6addr
        4 => &[(2, 0), (3, 4), (4, 16)],
        // isb_starttime .. isb_usrdeliv
        5 => &[(2, 8), (3, 8), (4, 8), (5, 8), (6, 8), (7, 8), (8, 8)],
        _ => &[],
    }
}

struct Writer {
    big: bool,
}

impl Writer {
    fn u16(&self, out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    fn u32(&self, out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }

    /// Options: known codes (right length, or a fuzzed one), comments, custom options, odd codes;
    /// then, usually, opt_endofopt.
    fn options(&self, u: &mut Unstructured, block_type: u32, out: &mut Vec<u8>) -> Result<()> {
        let known = known_options(block_type);
        let count = u.int_in_range(0..=6)?;
        for _ in 0..count {
            let (code, len) = match u.int_in_range(0..=4)? {
                0 | 1 if !known.is_empty() => *u.choose(known)?,
                2 => (1, 0),                                   // opt_comment
                3 => (*u.choose(&[2988, 2989, 19372, 19373])?, 0), // custom (PEN first)
                _ => (u.arbitrary()?, 0),
            };
            let len = if len == 0 || u.ratio(1, 4)? { u.int_in_range(0..=40)? } else { len };
            let len = len.min(u.len());
            let value = u.bytes(len)?;
            self.u16(out, code);
            self.u16(out, value.len() as u16);
            out.extend_from_slice(value);
            out.resize(out.len().next_multiple_of(4), 0);
        }
        if u.ratio(7, 8)? {
            self.u32(out, 0); // opt_endofopt, length 0
        }
        Ok(())
    }

    /// Frames `body` as a block: type, total length, body, total length.
    fn block(&self, out: &mut Vec<u8>, block_type: u32, body: &[u8]) {
        let total = (12 + body.len()) as u32;
        self.u32(out, block_type);
        self.u32(out, total);
        out.extend_from_slice(body);
        self.u32(out, total);
    }
}

/// One packet as written: interface id, data, orig_len.
struct Sent {
    interface: u32,
    data: Vec<u8>,
    orig_len: u32,
}

fn build(u: &mut Unstructured, file: &mut Vec<u8>, sent: &mut Vec<Sent>) -> Result<()> {
    let w = Writer { big: u.arbitrary()? };
    let mut shb = Vec::new();
    w.u32(&mut shb, 0x1a2b_3c4d);
    w.u16(&mut shb, 1);
    w.u16(&mut shb, 0);
    shb.extend_from_slice(&u64::MAX.to_le_bytes()); // section length: unknown
    w.options(u, 0x0a0d_0d0a, &mut shb)?;
    w.block(file, 0x0a0d_0d0a, &shb);
    let mut interfaces = 0u32;
    let blocks = u.int_in_range(0..=8)?;
    for _ in 0..blocks {
        let mut body = Vec::new();
        let kind: u8 = u.int_in_range(0..=6)?;
        let block_type = [1, 6, 6, 3, 2, 4, 5][kind as usize];
        match block_type {
            1 => {
                let linktype = *u.choose(&[1u16, 101, 228, 229, 113, 276, 0, 105])?;
                w.u16(&mut body, linktype);
                w.u16(&mut body, 0);
                w.u32(&mut body, *u.choose(&[0u32, 64, 65535, 262144, u32::MAX])?);
                interfaces += 1;
            }
            6 | 2 => {
                let interface = u.int_in_range(0..=interfaces)?;
                let len = u.int_in_range(0..=80)?.min(u.len());
                let data = u.bytes(len)?.to_vec();
                let orig_len = data.len() as u32 + u.int_in_range(0..=2)?;
                if block_type == 6 {
                    w.u32(&mut body, interface);
                } else {
                    w.u16(&mut body, interface as u16);
                    w.u16(&mut body, 0); // drops
                }
                w.u32(&mut body, u.arbitrary()?);
                w.u32(&mut body, u.arbitrary()?);
                w.u32(&mut body, data.len() as u32);
                w.u32(&mut body, orig_len);
                body.extend_from_slice(&data);
                body.resize(body.len().next_multiple_of(4), 0);
                sent.push(Sent { interface, data, orig_len });
            }
            3 => {
                let len = u.int_in_range(0..=80)?.min(u.len());
                let data = u.bytes(len)?.to_vec();
                w.u32(&mut body, data.len() as u32);
                body.extend_from_slice(&data);
                body.resize(body.len().next_multiple_of(4), 0);
                sent.push(Sent { interface: 0, orig_len: data.len() as u32, data });
                w.block(file, 3, &body); // an SPB has no options
                continue;
            }
            4 => {
                // One record (IPv4 + name), then nrb_record_end.
                w.u16(&mut body, 1);
                w.u16(&mut body, 10);
                body.extend_from_slice(&[10, 0, 0, 1, b'h', b'o', b's', b't', 0, 0, 0, 0]);
                w.u32(&mut body, 0);
            }
            _ => {
                w.u32(&mut body, u.int_in_range(0..=interfaces)?);
                w.u32(&mut body, u.arbitrary()?);
                w.u32(&mut body, u.arbitrary()?);
            }
        }
        w.options(u, block_type, &mut body)?;
        w.block(file, block_type, &body);
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut file = Vec::new();
    let mut sent = Vec::new();
    let _ = build(&mut u, &mut file, &mut sent);
    if file.is_empty() {
        return;
    }
    let mut source = match PcapSource::from_reader(Cursor::new(&file[..])) {
        Ok(source) => source,
        Err(err) => {
            assert!(!err.to_string().contains('\n'), "an error is one line: {err}");
            return;
        }
    };
    let mut read = Vec::new();
    let mut errors = 0;
    while let Some(result) = source.next_packet() {
        match result {
            Ok(p) => {
                assert_eq!(errors, 0, "packet after an error");
                assert!(p.data.len() <= MAX_CAPLEN_BYTES as usize);
                read.push((p.ts_ns, p.orig_len, p.data.to_vec(), p.linktype, p.interface_id));
            }
            Err(err) => {
                errors += 1;
                assert!(!err.to_string().contains('\n'), "an error is one line: {err}");
            }
        }
    }
    assert!(errors <= 1);
    assert!(source.next_packet().is_none());
    // Every packet read is the next one written (in order; a snaplen may cut an SPB's data).
    assert!(read.len() <= sent.len());
    for ((_, orig_len, data, _, interface), s) in read.iter().zip(&sent) {
        assert_eq!((*interface, *orig_len), (s.interface, s.orig_len));
        assert!(s.data.starts_with(data), "data read is a prefix of the data written");
    }
    // Round trip through the classic writer: the packets of the first packet's link type.
    let Some(&(_, _, _, linktype, _)) = read.first() else { return };
    let same: Vec<_> = read
        .iter()
        .filter(|p| p.3 == linktype && p.1 as usize >= p.2.len() && p.0 / 1_000_000_000 <= u64::from(u32::MAX))
        .collect();
    let mut writer = PcapWriter::from_writer(Vec::new(), MAX_CAPLEN_BYTES, LinkType(linktype.0)).expect("writer");
    for p in &same {
        writer.write_packet(p.0, p.1, &p.2).expect("a packet read writes");
    }
    let bytes = writer.into_inner().expect("written");
    let mut again = PcapSource::from_reader(Cursor::new(&bytes[..])).expect("written pcap reads");
    for p in &same {
        let q = again.next_packet().expect("as many packets").expect("no error");
        assert_eq!((q.ts_ns, q.orig_len, q.data, q.linktype), (p.0, p.1, &p.2[..], linktype));
    }
    assert!(again.next_packet().is_none());
});

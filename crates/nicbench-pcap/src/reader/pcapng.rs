//! pcapng: blocks framed as `type, total_len, body, total_len`, in sections
//! (Section Header Block) that declare interfaces (Interface Description Block:
//! link type, snaplen, `if_tsresol`, `if_tsoffset`); packets come in Enhanced,
//! Simple or (obsolete) Packet Blocks.
//!
//! Framing (length, alignment, trailer) is checked here so that a truncated
//! block is told apart from a corrupt one; section and interface blocks are
//! decoded by pcap-file's `PcapNgParser`, which keeps the section state. Packet
//! blocks' fixed fields are read here; their options are ignored.

use std::io::Read;

use pcap_file::pcapng::PcapNgParser;
use pcap_file::Endianness;

use super::{read_u32, CaptureFormat, Packet, PcapSource};
use crate::error::{PcapError, MAX_CAPLEN_BYTES};
use crate::linktype::LinkType;

pub(super) const SECTION_HEADER_BLOCK: u32 = 0x0a0d_0d0a;
const INTERFACE_DESCRIPTION_BLOCK: u32 = 0x0000_0001;
const PACKET_BLOCK: u32 = 0x0000_0002;
const SIMPLE_PACKET_BLOCK: u32 = 0x0000_0003;
const ENHANCED_PACKET_BLOCK: u32 = 0x0000_0006;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

/// Type, length and byte-order magic: enough to frame any block.
const BLOCK_PEEK_BYTES: usize = 12;
/// Smallest block: type, length, trailer length.
const MIN_BLOCK_BYTES: u32 = 12;
/// Largest block we believe (a packet block is at most ~256 KiB + options; a
/// name-resolution block can be big, but not this big).
const MAX_BLOCK_BYTES: u32 = 16 << 20;

/// How a pcapng interface's timestamp ticks become nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TsScale {
    /// 10^-r s with r <= 9: multiply.
    MulNs(u64),
    /// 10^-r s with 9 < r <= 28: divide.
    DivTicks(u64),
    /// 2^-r s.
    Pow2Shift(u32),
    /// Finer than 10^-28 s: every 64-bit tick count is below 1 ns.
    Zero,
}

impl TsScale {
    /// From the `if_tsresol` option byte (default 6: microseconds).
    fn from_tsresol(tsresol: u8) -> TsScale {
        let exponent = u32::from(tsresol & 0x7f);
        if tsresol & 0x80 != 0 {
            TsScale::Pow2Shift(exponent)
        } else if exponent <= 9 {
            TsScale::MulNs(10u64.pow(9 - exponent))
        } else if exponent - 9 <= 19 {
            TsScale::DivTicks(10u64.pow(exponent - 9))
        } else {
            TsScale::Zero
        }
    }

    #[inline]
    fn to_ns(self, ticks: u64) -> u64 {
        match self {
            TsScale::MulNs(ns_per_tick) => ticks.saturating_mul(ns_per_tick),
            TsScale::DivTicks(ticks_per_ns) => ticks / ticks_per_ns,
            TsScale::Pow2Shift(shift) => {
                let ns = (u128::from(ticks) * 1_000_000_000) >> shift;
                u64::try_from(ns).unwrap_or(u64::MAX)
            }
            TsScale::Zero => 0,
        }
    }
}

/// What a packet needs to know about the interface it came in on.
#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: LinkType,
    /// 0 = unlimited.
    snaplen: u32,
    ts_scale: TsScale,
    /// `if_tsoffset` \[ns\], added to every timestamp.
    ts_offset_ns: i64,
}

/// pcapng reading state: the current section's byte order and interfaces.
pub(super) struct NgState {
    parser: PcapNgParser,
    big_endian: bool,
    interfaces: Vec<Interface>,
}

impl NgState {
    pub(super) fn first_linktype(&self) -> Option<LinkType> {
        self.interfaces.first().map(|interface| interface.linktype)
    }

    /// Re-reads the section state after the parser consumed an SHB or IDB.
    fn sync_from_parser(&mut self, block_type: u32) -> Result<(), PcapError> {
        match block_type {
            SECTION_HEADER_BLOCK => {
                self.big_endian = self.parser.section().endianness == Endianness::Big;
                self.interfaces.clear();
            }
            INTERFACE_DESCRIPTION_BLOCK => {
                if let Some(idb) = self.parser.interfaces().last() {
                    let interface = interface_from_idb(idb);
                    if !interface.linktype.is_decoded() {
                        return Err(PcapError::UnsupportedLinkType {
                            linktype: interface.linktype,
                        });
                    }
                    self.interfaces.push(interface);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn interface_from_idb(
    idb: &pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock<'_>,
) -> Interface {
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
    let mut tsresol = 6u8;
    let mut ts_offset_s = 0i64;
    for option in &idb.options {
        match *option {
            InterfaceDescriptionOption::IfTsResol(value) => tsresol = value,
            // The spec makes if_tsoffset a signed 64-bit count of seconds.
            InterfaceDescriptionOption::IfTsOffset(value) => ts_offset_s = value as i64,
            _ => {}
        }
    }
    Interface {
        linktype: LinkType(u32::from(idb.linktype)),
        snaplen: idb.snaplen,
        ts_scale: TsScale::from_tsresol(tsresol),
        ts_offset_ns: ts_offset_s.saturating_mul(1_000_000_000),
    }
}

/// A packet block's fields, with the data as a range of the block.
struct PacketFields {
    interface_id: u32,
    /// `None` for Simple Packet Blocks, which carry no timestamp.
    ts_ticks: Option<u64>,
    caplen: u32,
    orig_len: u32,
    data_start: usize,
}

impl<R: Read> PcapSource<R> {
    /// Reads the mandatory first Section Header Block.
    pub(super) fn read_first_section_header(&mut self) -> Result<(), PcapError> {
        self.fill(BLOCK_PEEK_BYTES)?;
        if self.available() < BLOCK_PEEK_BYTES {
            return Err(PcapError::TruncatedFileHeader {
                available_bytes: self.available() as u64,
                needed_bytes: BLOCK_PEEK_BYTES as u64,
            });
        }
        let (block_len, big_endian) = frame_section_header(&self.buf[self.pos..self.end])
            .map_err(|reason| PcapError::CorruptFileHeader { reason })?;
        let block_len = block_len as usize;
        self.fill(block_len)?;
        if self.available() < block_len {
            return Err(PcapError::TruncatedFileHeader {
                available_bytes: self.available() as u64,
                needed_bytes: block_len as u64,
            });
        }
        let block = &self.buf[self.pos..self.pos + block_len];
        check_section_version(block, big_endian).map_err(|reason| PcapError::CorruptFileHeader { reason })?;
        let (_, parser) = PcapNgParser::new(block).map_err(|err| PcapError::CorruptFileHeader {
            reason: format!("section header block: {err}"),
        })?;
        let big_endian = parser.section().endianness == Endianness::Big;
        self.ng = Some(Box::new(NgState {
            parser,
            big_endian,
            interfaces: Vec::new(),
        }));
        self.format = CaptureFormat::PcapNg;
        self.pos += block_len;
        Ok(())
    }

    pub(super) fn next_pcapng(&mut self) -> Option<Result<Packet<'_>, PcapError>> {
        loop {
            if self.done {
                return None;
            }
            let (block_type, block_len) = match self.frame_next_block() {
                Ok(Some(frame)) => frame,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(err) => return self.fail(err),
            };
            match self.decode_block(block_type, block_len) {
                Ok(None) => self.pos += block_len,
                Ok(Some((fields, interface))) => {
                    let data_start = self.pos + fields.data_start;
                    self.pos += block_len;
                    self.packets_read += 1;
                    let ts_ns = match fields.ts_ticks {
                        Some(ticks) => interface
                            .ts_scale
                            .to_ns(ticks)
                            .saturating_add_signed(interface.ts_offset_ns),
                        None => 0,
                    };
                    return Some(Ok(Packet {
                        ts_ns,
                        orig_len: fields.orig_len,
                        data: &self.buf[data_start..data_start + fields.caplen as usize],
                        linktype: interface.linktype,
                        interface_id: fields.interface_id,
                    }));
                }
                Err(err) => return self.fail(err),
            }
        }
    }

    /// Buffers the whole next block at `pos`; `Ok(None)` at a clean end of file.
    fn frame_next_block(&mut self) -> Result<Option<(u32, usize)>, PcapError> {
        if self.available() < BLOCK_PEEK_BYTES {
            self.fill(BLOCK_PEEK_BYTES)?;
            let available = self.available();
            if available == 0 {
                return Ok(None);
            }
            if available < BLOCK_PEEK_BYTES {
                return Err(PcapError::TruncatedRecordHeader {
                    index: self.packets_read,
                    offset_bytes: self.bytes_read(),
                    available_bytes: available as u64,
                    needed_bytes: BLOCK_PEEK_BYTES as u64,
                });
            }
        }
        let big_endian = self.ng.as_ref().is_some_and(|ng| ng.big_endian);
        let head = &self.buf[self.pos..self.pos + BLOCK_PEEK_BYTES];
        let block_type = read_u32(head, 0, big_endian);
        let framed = if block_type == SECTION_HEADER_BLOCK {
            // A new section may switch byte order: its own magic decides.
            frame_section_header(head).map(|(block_len, _)| block_len)
        } else {
            let block_len = read_u32(head, 4, big_endian);
            check_block_len(block_len).map(|()| block_len)
        };
        let block_len = match framed {
            Ok(block_len) => block_len as usize,
            Err(reason) => return Err(self.corrupt(reason)),
        };
        if self.available() < block_len {
            self.fill(block_len)?;
            if self.available() < block_len {
                return Err(PcapError::TruncatedBlock {
                    index: self.packets_read,
                    offset_bytes: self.bytes_read(),
                    block_len: block_len as u64,
                    available_bytes: self.available() as u64,
                });
            }
        }
        Ok(Some((block_type, block_len)))
    }

    /// Decodes the buffered block at `pos`: updates section state, or returns a packet's fields.
    fn decode_block(
        &mut self,
        block_type: u32,
        block_len: usize,
    ) -> Result<Option<(PacketFields, Interface)>, PcapError> {
        let index = self.packets_read;
        let offset_bytes = self.bytes_read();
        let corrupt = |reason: String| PcapError::CorruptBlock {
            index,
            offset_bytes,
            reason,
        };
        let Some(ng) = self.ng.as_deref_mut() else {
            return Ok(None);
        };
        let block = &self.buf[self.pos..self.pos + block_len];
        if block_type == SECTION_HEADER_BLOCK {
            // A new section has its own byte order: its magic (frame_section_header) decides.
            let (_, big_endian) = frame_section_header(block).map_err(corrupt)?;
            check_section_version(block, big_endian).map_err(corrupt)?;
        }
        if matches!(block_type, SECTION_HEADER_BLOCK | INTERFACE_DESCRIPTION_BLOCK) {
            ng.parser
                .next_raw_block(block)
                .map_err(|err| corrupt(format!("{}: {err}", block_name(block_type))))?;
            ng.sync_from_parser(block_type)?;
            return Ok(None);
        }
        let big_endian = ng.big_endian;
        let trailer_len = read_u32(block, block_len - 4, big_endian);
        if trailer_len as usize != block_len {
            return Err(corrupt(format!(
                "{}: trailing block length {trailer_len} != leading block length {block_len}",
                block_name(block_type)
            )));
        }
        let body = &block[8..block_len - 4];
        let fields = match block_type {
            ENHANCED_PACKET_BLOCK | PACKET_BLOCK => {
                if body.len() < 20 {
                    return Err(corrupt(format!(
                        "{}: body of {} bytes < 20",
                        block_name(block_type),
                        body.len()
                    )));
                }
                let interface_id = if block_type == PACKET_BLOCK {
                    let raw = [body[0], body[1]];
                    u32::from(if big_endian {
                        u16::from_be_bytes(raw)
                    } else {
                        u16::from_le_bytes(raw)
                    })
                } else {
                    read_u32(body, 0, big_endian)
                };
                let ts_ticks =
                    (u64::from(read_u32(body, 4, big_endian)) << 32) | u64::from(read_u32(body, 8, big_endian));
                let caplen = read_u32(body, 12, big_endian);
                let orig_len = read_u32(body, 16, big_endian);
                if caplen > MAX_CAPLEN_BYTES {
                    return Err(PcapError::AbsurdCaplen {
                        index,
                        offset_bytes,
                        caplen,
                    });
                }
                if caplen as usize > body.len() - 20 {
                    return Err(corrupt(format!(
                        "{}: caplen {caplen} exceeds the {} bytes left in the block",
                        block_name(block_type),
                        body.len() - 20
                    )));
                }
                PacketFields {
                    interface_id,
                    ts_ticks: Some(ts_ticks),
                    caplen,
                    orig_len,
                    data_start: 28,
                }
            }
            SIMPLE_PACKET_BLOCK => {
                if body.len() < 4 {
                    return Err(corrupt(format!(
                        "{}: body of {} bytes < 4",
                        block_name(block_type),
                        body.len()
                    )));
                }
                let orig_len = read_u32(body, 0, big_endian);
                // The SPB has no caplen: the data is the packet cut to the
                // interface's snaplen, then padded to 32 bits.
                let room = (body.len() - 4).min(MAX_CAPLEN_BYTES as usize) as u32;
                let mut caplen = orig_len.min(room);
                if let Some(interface) = ng.interfaces.first() {
                    if interface.snaplen != 0 {
                        caplen = caplen.min(interface.snaplen);
                    }
                }
                PacketFields {
                    interface_id: 0,
                    ts_ticks: None,
                    caplen,
                    orig_len,
                    data_start: 12,
                }
            }
            _ => return Ok(None),
        };
        let Some(interface) = ng.interfaces.get(fields.interface_id as usize).copied() else {
            return Err(PcapError::UnknownInterface {
                index,
                offset_bytes,
                interface_id: fields.interface_id,
                declared: ng.interfaces.len(),
            });
        };
        if interface.snaplen != 0 && fields.caplen > interface.snaplen {
            return Err(PcapError::CaplenExceedsSnaplen {
                index,
                offset_bytes,
                caplen: fields.caplen,
                snaplen: interface.snaplen,
            });
        }
        Ok(Some((fields, interface)))
    }

    #[cold]
    fn corrupt(&self, reason: String) -> PcapError {
        PcapError::CorruptBlock {
            index: self.packets_read,
            offset_bytes: self.bytes_read(),
            reason,
        }
    }
}

/// Frames a Section Header Block from its first 12 bytes: (total length, big-endian?).
fn frame_section_header(head: &[u8]) -> Result<(u32, bool), String> {
    let magic = u32::from_be_bytes([head[8], head[9], head[10], head[11]]);
    let big_endian = if magic == BYTE_ORDER_MAGIC {
        true
    } else if magic.swap_bytes() == BYTE_ORDER_MAGIC {
        false
    } else {
        return Err(format!(
            "section header block: byte-order magic 0x{magic:08x} is neither 0x1a2b3c4d nor 0x4d3c2b1a"
        ));
    };
    let block_len = read_u32(head, 4, big_endian);
    check_block_len(block_len)?;
    // Type, length, magic, versions, section length, trailer.
    if block_len < 28 {
        return Err(format!("section header block: length {block_len} < 28"));
    }
    Ok((block_len, big_endian))
}

/// The pcapng major version a reader knows: 1 (draft-ietf-opsawg-pcapng, section 4.1: a reader
/// must not read a section of a major version it does not know, whose blocks may differ). Minor
/// versions are compatible (1.2 from old writers reads as 1.0).
const PCAPNG_MAJOR_VERSION: u16 = 1;

/// Refuses a Section Header Block of another major version (`block`: the whole block).
fn check_section_version(block: &[u8], big_endian: bool) -> Result<(), String> {
    let raw = [block[12], block[13]];
    let major = if big_endian {
        u16::from_be_bytes(raw)
    } else {
        u16::from_le_bytes(raw)
    };
    if major != PCAPNG_MAJOR_VERSION {
        return Err(format!(
            "section header block: pcapng major version {major}: only version {PCAPNG_MAJOR_VERSION} is defined, \
             and a section of another major version may lay its blocks out differently"
        ));
    }
    Ok(())
}

fn check_block_len(block_len: u32) -> Result<(), String> {
    if block_len < MIN_BLOCK_BYTES {
        return Err(format!("block length {block_len} < {MIN_BLOCK_BYTES}"));
    }
    if block_len % 4 != 0 {
        return Err(format!("block length {block_len} is not a multiple of 4"));
    }
    if block_len > MAX_BLOCK_BYTES {
        return Err(format!(
            "block length {block_len} is absurd (> {MAX_BLOCK_BYTES} bytes)"
        ));
    }
    Ok(())
}

fn block_name(block_type: u32) -> &'static str {
    match block_type {
        SECTION_HEADER_BLOCK => "section header block",
        INTERFACE_DESCRIPTION_BLOCK => "interface description block",
        PACKET_BLOCK => "packet block",
        SIMPLE_PACKET_BLOCK => "simple packet block",
        ENHANCED_PACKET_BLOCK => "enhanced packet block",
        _ => "block",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_tsresol_scales() {
        assert_eq!(TsScale::from_tsresol(6).to_ns(1_500_000), 1_500_000_000);
        assert_eq!(TsScale::from_tsresol(9).to_ns(42), 42);
        assert_eq!(TsScale::from_tsresol(0).to_ns(3), 3_000_000_000);
        assert_eq!(TsScale::from_tsresol(12).to_ns(5_000), 5);
        // 2^-10 s: 1024 ticks per second.
        assert_eq!(TsScale::from_tsresol(0x80 | 10).to_ns(1024 + 512), 1_500_000_000);
        assert_eq!(TsScale::from_tsresol(0x7f).to_ns(u64::MAX), 0);
        assert_eq!(TsScale::from_tsresol(0).to_ns(u64::MAX), u64::MAX, "saturates");
    }

    #[test]
    fn test_check_block_len() {
        assert!(check_block_len(12).is_ok());
        assert!(check_block_len(8).is_err());
        assert!(check_block_len(30).is_err());
        assert!(check_block_len(MAX_BLOCK_BYTES + 4).is_err());
    }
}

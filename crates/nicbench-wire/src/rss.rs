//! Toeplitz RSS hash (any key), the usual keys, and the indirection table
//! (RETA) that maps a hash to a receive queue — what a NIC does to spread flows
//! over cores.
//!
//! - [`Toeplitz`] hashes with a table per input byte (256 × u32 each, built once
//!   per key), so hashing an IPv4 4-tuple is 12 table loads and XORs. A
//!   bit-by-bit implementation of the Microsoft definition,
//!   [`Toeplitz::hash_reference`], is kept as the test oracle. (A carry-less
//!   multiply version, PCLMULQDQ, cost as many instructions and was not faster:
//!   see BENCHMARKS.md, issue 20.)
//! - Inputs follow the Microsoft layout in network byte order: source address,
//!   destination address, then (for the `*Ports` forms) source port,
//!   destination port. An input may be at most `key_len - 4` bytes long
//!   (36 for the 40-byte keys: an IPv6 4-tuple).
//! - [`SYMMETRIC_KEY`] (`0x6d5a` repeated) gives both directions of a flow the
//!   same hash, hence the same queue. Its hash is made of one repeating 16-bit
//!   pattern, so it has only ~16 bits of entropy: fine to choose a queue, not
//!   to key a flow table.
//! - [`Reta`]: `queue = table[hash & (size - 1)]`, as NICs use the low bits.
//!   [`Reta::mlx5_of_queues`] builds the table the mlx5 PMD builds for an rte_flow
//!   `rss` action's queue list; [`MLX5_DEFAULT_KEY`] is that PMD's key when none is given.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::flowkey::FlowKey;
use crate::parse::{flow_key, ipv4_rss_fields, ParseStop};

/// The key in Microsoft's "Verifying the RSS Hash Calculation", used by most
/// drivers' defaults (and DPDK's `test_thash.c`).
pub const MICROSOFT_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b,
    0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac,
    0x01, 0xfa,
];

/// The mlx5 PMD's default key: `rss_hash_default_key` in DPDK `drivers/net/mlx5/mlx5_rxq.c`
/// ("Default RSS hash key also used for ConnectX-3"), `MLX5_RSS_HASH_KEY_LEN` = 40 bytes. An
/// rte_flow `rss` action without a key gets it (`rss->key ? rss->key : rss_hash_default_key`).
pub const MLX5_DEFAULT_KEY: [u8; 40] = [
    0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94, 0x6b, 0x9e, 0x38,
    0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f,
    0xdc, 0x2a,
];

/// Largest indirection table the mlx5 PMD builds \[entries\]: the device's
/// `max_rwq_indirection_table_size` capped at `RTE_ETH_RSS_RETA_SIZE_512` (mlx5_os.c, "Remove
/// this check once DPDK supports larger/variable indirection tables"); ConnectX-4 and later
/// report more than 512, so the cap is what applies.
pub const MLX5_IND_TABLE_MAX_SIZE: usize = 512;

/// Symmetric key (Woo & Park, "Scalable TCP Session Monitoring with Symmetric
/// Receive-side Scaling"): `0x6d5a` repeated, 40 bytes (mlx5's key length).
pub const SYMMETRIC_KEY: [u8; 40] = symmetric_key();

/// The symmetric key at 52 bytes (i40e/ice key length).
pub const SYMMETRIC_KEY_52: [u8; 52] = symmetric_key();

const fn symmetric_key<const N: usize>() -> [u8; N] {
    let mut key = [0u8; N];
    let mut i = 0;
    while i < N {
        key[i] = if i % 2 == 0 { 0x6d } else { 0x5a };
        i += 1;
    }
    key
}

/// Shortest key accepted \[bytes\]: 4 bytes of window plus at least 4 of input.
pub const MIN_KEY_BYTES: usize = 8;
/// Longest key accepted \[bytes\] (tables cost 1 KiB per byte of key).
pub const MAX_KEY_BYTES: usize = 128;
/// Longest input any [`RssInput`] produces \[bytes\]: IPv6 addresses and ports.
pub const MAX_RSS_INPUT_BYTES: usize = 36;
/// Default RETA size (mlx5, ixgbe: 128 entries).
pub const DEFAULT_RETA_SIZE: usize = 128;

/// Errors building keys, hashers and indirection tables.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RssError {
    #[error("RSS key of {len_bytes} bytes is too short (at least {min} bytes)", min = MIN_KEY_BYTES)]
    KeyTooShort { len_bytes: usize },
    #[error("RSS key of {len_bytes} bytes is too long (at most {max} bytes)", max = MAX_KEY_BYTES)]
    KeyTooLong { len_bytes: usize },
    #[error("RSS key hex has an odd number of digits ({digits})")]
    OddHexDigits { digits: usize },
    #[error("RSS key hex: invalid character {character:?} at column {column}")]
    InvalidHexCharacter { character: char, column: usize },
    #[error("RETA size {size} must be a power of two in 64..=512")]
    InvalidRetaSize { size: usize },
    #[error("RETA needs at least one queue")]
    NoQueues,
    #[error("RETA index {index} out of range (size {size})")]
    RetaIndexOutOfRange { index: usize, size: usize },
    #[error("{n_queues} RSS queues do not fit an indirection table of {max} entries")]
    TooManyQueues { n_queues: usize, max: usize },
}

/// Parses a key written in hex: `6d5a56da…`, optionally `0x`-prefixed, bytes
/// optionally separated by `:`, `-` or whitespace (as `ethtool -x` prints them).
pub fn parse_key_hex(text: &str) -> Result<Vec<u8>, RssError> {
    let trimmed = text.trim();
    let (body, prefix_chars) = match trimmed.strip_prefix("0x").or_else(|| trimmed.strip_prefix("0X")) {
        Some(rest) => (rest, 2),
        None => (trimmed, 0),
    };
    let leading_ws = text.len() - text.trim_start().len();
    let mut nibbles = Vec::with_capacity(body.len());
    for (char_index, character) in body.chars().enumerate() {
        if matches!(character, ':' | '-') || character.is_whitespace() {
            continue;
        }
        let Some(nibble) = character.to_digit(16) else {
            // Columns are 1-based, counted in characters of the original text.
            let column = text[..leading_ws].chars().count() + prefix_chars + char_index + 1;
            return Err(RssError::InvalidHexCharacter { character, column });
        };
        nibbles.push(nibble as u8);
    }
    if nibbles.len() % 2 != 0 {
        return Err(RssError::OddHexDigits { digits: nibbles.len() });
    }
    let key: Vec<u8> = nibbles.chunks_exact(2).map(|pair| (pair[0] << 4) | pair[1]).collect();
    check_key_len(key.len())?;
    Ok(key)
}

fn check_key_len(len_bytes: usize) -> Result<(), RssError> {
    if len_bytes < MIN_KEY_BYTES {
        return Err(RssError::KeyTooShort { len_bytes });
    }
    if len_bytes > MAX_KEY_BYTES {
        return Err(RssError::KeyTooLong { len_bytes });
    }
    Ok(())
}

/// A Toeplitz hasher for one key.
#[derive(Clone)]
pub struct Toeplitz {
    key: Vec<u8>,
    /// `tables[i][b]`: XOR of the 32-bit key windows selected by the set bits of
    /// byte value `b` at input byte position `i`. `tables.len() == key.len() - 4`.
    tables: Box<[[u32; 256]]>,
}

impl std::fmt::Debug for Toeplitz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toeplitz")
            .field("key_len_bytes", &self.key.len())
            .finish_non_exhaustive()
    }
}

impl Toeplitz {
    /// Builds the per-byte tables for `key` (8..=128 bytes; 40 and 52 are usual).
    pub fn new(key: &[u8]) -> Result<Toeplitz, RssError> {
        check_key_len(key.len())?;
        let max_input = key.len() - 4;
        let mut tables = vec![[0u32; 256]; max_input].into_boxed_slice();
        for (byte_index, table) in tables.iter_mut().enumerate() {
            // 40 key bits starting at this byte cover the windows of its 8 input bits.
            let key_bits = key[byte_index..byte_index + 5]
                .iter()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            // window_for_bit[k]: window for the input bit with value 0x80 >> k.
            let window_for_bit: [u32; 8] = std::array::from_fn(|k| (key_bits >> (8 - k)) as u32);
            for value in 1..256usize {
                let lowest_bit = value.trailing_zeros() as usize; // bit value 1 << lowest_bit
                table[value] = table[value & (value - 1)] ^ window_for_bit[7 - lowest_bit];
            }
        }
        Ok(Toeplitz {
            key: key.to_vec(),
            tables,
        })
    }

    /// The key this hasher was built for.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Longest input hashed \[bytes\] (`key_len - 4`); longer inputs are cut to it,
    /// as a NIC never hashes more than its key covers.
    pub fn max_input_bytes(&self) -> usize {
        self.tables.len()
    }

    /// Hash of `input` (network byte order, see [`RssInput`]).
    #[inline]
    pub fn hash(&self, input: &[u8]) -> u32 {
        input
            .iter()
            .zip(self.tables.iter())
            .fold(0, |hash, (&byte, table)| hash ^ table[usize::from(byte)])
    }

    /// Hash of a structured input, without allocating. Each form is hashed
    /// through a fixed-size array, so the table walk is fully unrolled.
    #[inline]
    pub fn hash_input(&self, input: &RssInput) -> u32 {
        match *input {
            RssInput::Ipv4 { src, dst } => {
                let [s0, s1, s2, s3] = src.octets();
                let [d0, d1, d2, d3] = dst.octets();
                self.hash_fixed(&[s0, s1, s2, s3, d0, d1, d2, d3])
            }
            RssInput::Ipv4Ports {
                src,
                dst,
                src_port,
                dst_port,
            } => {
                let [s0, s1, s2, s3] = src.octets();
                let [d0, d1, d2, d3] = dst.octets();
                let [sp0, sp1] = src_port.to_be_bytes();
                let [dp0, dp1] = dst_port.to_be_bytes();
                self.hash_fixed(&[s0, s1, s2, s3, d0, d1, d2, d3, sp0, sp1, dp0, dp1])
            }
            RssInput::Ipv6 { src, dst } => {
                let mut bytes = [0u8; 32];
                bytes[..16].copy_from_slice(&src.octets());
                bytes[16..].copy_from_slice(&dst.octets());
                self.hash_fixed(&bytes)
            }
            RssInput::Ipv6Ports {
                src,
                dst,
                src_port,
                dst_port,
            } => {
                let mut bytes = [0u8; 36];
                bytes[..16].copy_from_slice(&src.octets());
                bytes[16..32].copy_from_slice(&dst.octets());
                bytes[32..34].copy_from_slice(&src_port.to_be_bytes());
                bytes[34..].copy_from_slice(&dst_port.to_be_bytes());
                self.hash_fixed(&bytes)
            }
        }
    }

    /// Hash of the IPv4 input `addrs` (source address in the high 32 bits,
    /// destination in the low 32) then `ports` (source port in the high 16 bits):
    /// the 12 bytes of `RssInput::Ipv4Ports`, big-endian. Zero bytes add nothing
    /// to a Toeplitz hash, so `ports == 0` gives the 8-byte `RssInput::Ipv4` hash.
    #[inline]
    pub fn hash_ipv4(&self, addrs: u64, ports: u32) -> u32 {
        let [s0, s1, s2, s3, d0, d1, d2, d3] = addrs.to_be_bytes();
        let [sp0, sp1, dp0, dp1] = ports.to_be_bytes();
        self.hash_fixed(&[s0, s1, s2, s3, d0, d1, d2, d3, sp0, sp1, dp0, dp1])
    }

    /// [`Toeplitz::hash`] for a compile-time length: no bounds checks, unrolled.
    #[inline(always)]
    fn hash_fixed<const N: usize>(&self, input: &[u8; N]) -> u32 {
        match self.tables.get(..N) {
            Some(tables) => {
                let mut hash = 0;
                for i in 0..N {
                    hash ^= tables[i][usize::from(input[i])];
                }
                hash
            }
            // A short key covers fewer bytes: the generic path cuts the input.
            None => self.hash(input),
        }
    }

    /// Bit-by-bit Toeplitz straight from Microsoft's definition: for each set
    /// input bit (most significant first), XOR in the 32 key bits starting at
    /// that bit position. Slow; the oracle for [`Toeplitz::hash`].
    pub fn hash_reference(&self, input: &[u8]) -> u32 {
        let key_bit = |position: usize| -> u32 {
            let byte = self.key.get(position / 8).copied().unwrap_or(0);
            u32::from((byte >> (7 - position % 8)) & 1)
        };
        let mut hash = 0u32;
        for (byte_index, &byte) in input.iter().take(self.max_input_bytes()).enumerate() {
            for bit in 0..8 {
                if byte & (0x80 >> bit) != 0 {
                    let start = byte_index * 8 + bit;
                    let window = (0..32).fold(0u32, |acc, offset| (acc << 1) | key_bit(start + offset));
                    hash ^= window;
                }
            }
        }
        hash
    }
}

/// The fields a NIC feeds to Toeplitz, in network byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RssInput {
    Ipv4 {
        src: Ipv4Addr,
        dst: Ipv4Addr,
    },
    Ipv4Ports {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        src_port: u16,
        dst_port: u16,
    },
    Ipv6 {
        src: Ipv6Addr,
        dst: Ipv6Addr,
    },
    Ipv6Ports {
        src: Ipv6Addr,
        dst: Ipv6Addr,
        src_port: u16,
        dst_port: u16,
    },
}

/// The serialized bytes of an [`RssInput`], on the stack.
#[derive(Clone, Copy, Debug)]
pub struct RssInputBytes {
    bytes: [u8; MAX_RSS_INPUT_BYTES],
    len: usize,
}

impl RssInputBytes {
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl RssInput {
    /// Serializes: src address, dst address, [src port, dst port], big-endian.
    #[inline]
    pub fn to_bytes(&self) -> RssInputBytes {
        let mut bytes = [0u8; MAX_RSS_INPUT_BYTES];
        let len = match *self {
            RssInput::Ipv4 { src, dst } => {
                bytes[0..4].copy_from_slice(&src.octets());
                bytes[4..8].copy_from_slice(&dst.octets());
                8
            }
            RssInput::Ipv4Ports {
                src,
                dst,
                src_port,
                dst_port,
            } => {
                bytes[0..4].copy_from_slice(&src.octets());
                bytes[4..8].copy_from_slice(&dst.octets());
                bytes[8..10].copy_from_slice(&src_port.to_be_bytes());
                bytes[10..12].copy_from_slice(&dst_port.to_be_bytes());
                12
            }
            RssInput::Ipv6 { src, dst } => {
                bytes[0..16].copy_from_slice(&src.octets());
                bytes[16..32].copy_from_slice(&dst.octets());
                32
            }
            RssInput::Ipv6Ports {
                src,
                dst,
                src_port,
                dst_port,
            } => {
                bytes[0..16].copy_from_slice(&src.octets());
                bytes[16..32].copy_from_slice(&dst.octets());
                bytes[32..34].copy_from_slice(&src_port.to_be_bytes());
                bytes[34..36].copy_from_slice(&dst_port.to_be_bytes());
                36
            }
        };
        RssInputBytes { bytes, len }
    }

    /// The RSS input a NIC configured for `fields` builds from `key`. Ports are
    /// used only for TCP, UDP and SCTP; other protocols hash the 2-tuple, as
    /// NICs do. (Mixed address families cannot come from the parser; should
    /// one appear, both addresses are hashed as IPv6, IPv4 ones mapped.)
    #[inline]
    pub fn from_flow(key: &FlowKey, fields: RssFields) -> RssInput {
        let with_ports = fields == RssFields::IpPorts && has_ports(key.proto);
        let (src_port, dst_port) = (key.src_port, key.dst_port);
        match (key.src, key.dst) {
            (IpAddr::V4(src), IpAddr::V4(dst)) if with_ports => RssInput::Ipv4Ports {
                src,
                dst,
                src_port,
                dst_port,
            },
            (IpAddr::V4(src), IpAddr::V4(dst)) => RssInput::Ipv4 { src, dst },
            (src, dst) => {
                let (src, dst) = (to_v6(src), to_v6(dst));
                if with_ports {
                    RssInput::Ipv6Ports {
                        src,
                        dst,
                        src_port,
                        dst_port,
                    }
                } else {
                    RssInput::Ipv6 { src, dst }
                }
            }
        }
    }
}

fn to_v6(addr: IpAddr) -> Ipv6Addr {
    match addr {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    }
}

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
const IPPROTO_SCTP: u8 = 132;

fn has_ports(proto: u8) -> bool {
    matches!(proto, IPPROTO_TCP | IPPROTO_UDP | IPPROTO_SCTP)
}

/// Which header fields the NIC hashes (`ethtool -N … rx-flow-hash`: `sd` vs `sdfn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RssFields {
    /// Source and destination address.
    Ip,
    /// Addresses and, for TCP/UDP/SCTP, ports.
    IpPorts,
}

/// RSS hash of a flow key as a NIC configured for `fields` computes it.
#[inline]
pub fn hash_flow(toeplitz: &Toeplitz, key: &FlowKey, fields: RssFields) -> u32 {
    // IPv4 hashed straight from the key's addresses, by reference: building the
    // `RssInput` first copies both `IpAddr`s (a third of the pipeline's instructions).
    // Same bytes in the same order as `RssInput::to_bytes` (tested).
    if let (IpAddr::V4(src), IpAddr::V4(dst)) = (&key.src, &key.dst) {
        let [s0, s1, s2, s3] = src.octets();
        let [d0, d1, d2, d3] = dst.octets();
        if fields == RssFields::IpPorts && has_ports(key.proto) {
            let [sp0, sp1] = key.src_port.to_be_bytes();
            let [dp0, dp1] = key.dst_port.to_be_bytes();
            return toeplitz.hash_fixed(&[s0, s1, s2, s3, d0, d1, d2, d3, sp0, sp1, dp0, dp1]);
        }
        return toeplitz.hash_fixed(&[s0, s1, s2, s3, d0, d1, d2, d3]);
    }
    toeplitz.hash_input(&RssInput::from_flow(key, fields))
}

/// The ports word of an IPv4 input for [`hash_frame`]: 0 (which hashes as the
/// 2-tuple) unless `fields` takes ports and the protocol has them, as in [`hash_flow`].
#[inline(always)]
fn ipv4_ports(fields: RssFields, proto: u8, ports: u32) -> u32 {
    if fields == RssFields::IpPorts && has_ports(proto) {
        ports
    } else {
        0
    }
}

/// RSS hash of an Ethernet frame, or why it has no flow key: the same as
/// `flow_key(frame).map(|key| hash_flow(toeplitz, &key, fields))` (tested on
/// random and mutated frames), but IPv4 frames are hashed from their bytes in
/// place, without building a [`FlowKey`].
#[inline]
pub fn hash_frame(toeplitz: &Toeplitz, frame: &[u8], fields: RssFields) -> Result<u32, ParseStop> {
    match ipv4_rss_fields(frame) {
        Some(v4) => Ok(toeplitz.hash_ipv4(v4.addrs, ipv4_ports(fields, v4.proto, v4.ports))),
        None => other_frame_hash(toeplitz, frame, fields),
    }
}

#[inline(never)]
fn other_frame_hash(toeplitz: &Toeplitz, frame: &[u8], fields: RssFields) -> Result<u32, ParseStop> {
    flow_key(frame).map(|key| hash_flow(toeplitz, &key, fields))
}

/// Indirection table: hash low bits → receive queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reta {
    entries: Vec<u16>,
    /// `entries.len() - 1`; the length is a power of two.
    index_mask: u32,
}

impl Reta {
    /// `size` entries (power of two, 64..=512) filled 0, 1, …, n-1, 0, 1, …
    /// like drivers' defaults.
    pub fn round_robin(n_queues: u16, size: usize) -> Result<Reta, RssError> {
        if n_queues == 0 {
            return Err(RssError::NoQueues);
        }
        if !(64..=512).contains(&size) || !size.is_power_of_two() {
            return Err(RssError::InvalidRetaSize { size });
        }
        let entries = (0..size).map(|index| (index % usize::from(n_queues)) as u16).collect();
        Ok(Reta {
            entries,
            index_mask: (size - 1) as u32,
        })
    }

    /// The table the mlx5 PMD builds for an rte_flow `rss` action's queue list
    /// (`mlx5_ind_table_obj_setup` + `ind_table_new`, DPDK 22.11 `drivers/net/mlx5/mlx5_rxq.c`,
    /// `mlx5_devx.c`): `1 << log2above(n)` entries when `n` is a power of two, else
    /// [`MLX5_IND_TABLE_MAX_SIZE`]; the queues in list order, then the list repeated to
    /// fill the table (`rqt[i] = rqt[i - n]`). So with a power-of-two `n` the queue is
    /// `queues[hash mod n]`, and otherwise `queues[(hash mod 512) mod n]`: the first
    /// `512 mod n` queues of the list get one entry more than the others.
    pub fn mlx5_of_queues(queues: &[u16]) -> Result<Reta, RssError> {
        let n = queues.len();
        if n == 0 {
            return Err(RssError::NoQueues);
        }
        let size = if n.is_power_of_two() {
            n
        } else {
            MLX5_IND_TABLE_MAX_SIZE
        };
        if n > size {
            return Err(RssError::TooManyQueues {
                n_queues: n,
                max: MLX5_IND_TABLE_MAX_SIZE,
            });
        }
        let entries = (0..size).map(|index| queues[index % n]).collect();
        Ok(Reta {
            entries,
            index_mask: (size - 1) as u32,
        })
    }

    /// The receive queue for an RSS hash.
    #[inline]
    pub fn queue(&self, hash: u32) -> u16 {
        self.entries[(hash & self.index_mask) as usize]
    }

    /// Points entry `index` at `queue` (as `ethtool -X … weight`/`rte_eth_dev_rss_reta_update` do).
    pub fn set(&mut self, index: usize, queue: u16) -> Result<(), RssError> {
        let size = self.entries.len();
        let entry = self
            .entries
            .get_mut(index)
            .ok_or(RssError::RetaIndexOutOfRange { index, size })?;
        *entry = queue;
        Ok(())
    }

    /// All entries, index order.
    pub fn entries(&self) -> &[u16] {
        &self.entries
    }

    /// Number of entries.
    pub fn size(&self) -> usize {
        self.entries.len()
    }
}

impl Default for Reta {
    /// 128 entries over one queue.
    fn default() -> Self {
        Reta {
            entries: vec![0; DEFAULT_RETA_SIZE],
            index_mask: (DEFAULT_RETA_SIZE - 1) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use proptest::prelude::*;

    use super::*;

    /// Microsoft "Verifying the RSS Hash Calculation" (same in DPDK app/test/test_thash.c):
    /// (source, destination, hash of IPs only, hash of IPs and ports).
    const KNOWN_ANSWERS: [(&str, &str, u32, u32); 8] = [
        ("66.9.149.187:2794", "161.142.100.80:1766", 0x323e8fc2, 0x51ccc178),
        ("199.92.111.2:14230", "65.69.140.83:4739", 0xd718262a, 0xc626b0ea),
        ("24.19.198.95:12898", "12.22.207.184:38024", 0xd2d0a5de, 0x5c2b394a),
        ("38.27.205.30:48228", "209.142.163.6:2217", 0x82989176, 0xafc7327f),
        ("153.39.163.191:44251", "202.188.127.2:1303", 0x5d1809c5, 0x10e828a2),
        (
            "[3ffe:2501:200:1fff::7]:2794",
            "[3ffe:2501:200:3::1]:1766",
            0x2cc18cd5,
            0x40207d3d,
        ),
        (
            "[3ffe:501:8::260:97ff:fe40:efab]:14230",
            "[ff02::1]:4739",
            0x0f0c461c,
            0xdde51bbf,
        ),
        (
            "[3ffe:1900:4545:3:200:f8ff:fe21:67cf]:44251",
            "[fe80::200:f8ff:fe21:67cf]:38024",
            0x4b61e985,
            0x02d1feef,
        ),
    ];

    fn flow(src: SocketAddr, dst: SocketAddr, proto: u8) -> FlowKey {
        FlowKey {
            src: src.ip(),
            dst: dst.ip(),
            proto,
            src_port: src.port(),
            dst_port: dst.port(),
            vlan: None,
            vni: None,
        }
    }

    #[test]
    fn test_known_answers_microsoft_key() {
        let toeplitz = Toeplitz::new(&MICROSOFT_KEY).unwrap();
        for (src, dst, ip_only, ip_ports) in KNOWN_ANSWERS {
            let key = flow(src.parse().unwrap(), dst.parse().unwrap(), IPPROTO_TCP);
            assert_eq!(
                hash_flow(&toeplitz, &key, RssFields::Ip),
                ip_only,
                "{src} -> {dst} IP only"
            );
            assert_eq!(
                hash_flow(&toeplitz, &key, RssFields::IpPorts),
                ip_ports,
                "{src} -> {dst} IP+ports"
            );
            let bytes = RssInput::from_flow(&key, RssFields::IpPorts).to_bytes();
            assert_eq!(
                toeplitz.hash_reference(bytes.as_slice()),
                ip_ports,
                "reference {src} -> {dst}"
            );
        }
    }

    #[test]
    fn test_ports_only_for_tcp_udp_sctp() {
        let toeplitz = Toeplitz::new(&MICROSOFT_KEY).unwrap();
        let (src, dst, ip_only, ip_ports) = KNOWN_ANSWERS[0];
        let (src, dst) = (src.parse().unwrap(), dst.parse().unwrap());
        for proto in [IPPROTO_UDP, IPPROTO_SCTP] {
            assert_eq!(
                hash_flow(&toeplitz, &flow(src, dst, proto), RssFields::IpPorts),
                ip_ports
            );
        }
        // ICMP (1) and GRE (47): the NIC falls back to the 2-tuple.
        for proto in [1, 47] {
            assert_eq!(
                hash_flow(&toeplitz, &flow(src, dst, proto), RssFields::IpPorts),
                ip_only
            );
        }
    }

    #[test]
    fn test_input_layout() {
        let input = RssInput::Ipv4Ports {
            src: Ipv4Addr::new(1, 2, 3, 4),
            dst: Ipv4Addr::new(5, 6, 7, 8),
            src_port: 0x0102,
            dst_port: 0x0304,
        };
        assert_eq!(input.to_bytes().as_slice(), &[1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4]);
        let v6 = RssInput::Ipv6 {
            src: Ipv6Addr::LOCALHOST,
            dst: Ipv6Addr::UNSPECIFIED,
        };
        assert_eq!(v6.to_bytes().as_slice().len(), 32);
        assert_eq!(v6.to_bytes().as_slice()[15], 1);
    }

    #[test]
    fn test_keys() {
        assert_eq!(&SYMMETRIC_KEY[..4], &[0x6d, 0x5a, 0x6d, 0x5a]);
        assert!(SYMMETRIC_KEY_52.chunks(2).all(|pair| pair == [0x6d, 0x5a]));
        let hex = "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa";
        assert_eq!(parse_key_hex(hex).unwrap(), MICROSOFT_KEY);
        assert_eq!(
            parse_key_hex(&format!("0x{}", hex.to_uppercase())).unwrap(),
            MICROSOFT_KEY
        );
        let colons: Vec<String> = MICROSOFT_KEY.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(parse_key_hex(&colons.join(":")).unwrap(), MICROSOFT_KEY);
        assert_eq!(
            parse_key_hex("6d5a6d5a6d5a6d5"),
            Err(RssError::OddHexDigits { digits: 15 })
        );
        let err = parse_key_hex("  6d5a6d5g6d5a6d5a").unwrap_err();
        assert_eq!(
            err,
            RssError::InvalidHexCharacter {
                character: 'g',
                column: 10
            }
        );
        assert_eq!(err.to_string(), "RSS key hex: invalid character 'g' at column 10");
        assert_eq!(parse_key_hex("6d5a"), Err(RssError::KeyTooShort { len_bytes: 2 }));
        assert!(matches!(
            Toeplitz::new(&[0; 7]),
            Err(RssError::KeyTooShort { len_bytes: 7 })
        ));
        assert!(matches!(Toeplitz::new(&[0; 129]), Err(RssError::KeyTooLong { .. })));
        assert_eq!(Toeplitz::new(&SYMMETRIC_KEY_52).unwrap().max_input_bytes(), 48);
    }

    #[test]
    fn test_input_beyond_key_is_ignored() {
        let toeplitz = Toeplitz::new(&[0xff; 8]).unwrap();
        assert_eq!(toeplitz.max_input_bytes(), 4);
        assert_eq!(toeplitz.hash(&[1, 2, 3, 4, 5, 6]), toeplitz.hash(&[1, 2, 3, 4]));
        assert_eq!(
            toeplitz.hash_reference(&[1, 2, 3, 4, 5, 6]),
            toeplitz.hash(&[1, 2, 3, 4])
        );
    }

    #[test]
    fn test_mlx5_reta_repeats_the_queue_list() {
        // Power of two: one entry per queue, queue = queues[hash mod n].
        let reta = Reta::mlx5_of_queues(&[7, 3, 5, 1]).unwrap();
        assert_eq!(reta.entries(), &[7, 3, 5, 1]);
        for hash in [0u32, 1, 2, 3, 4, 0xffff_fffe, 0x1234_5677] {
            assert_eq!(reta.queue(hash), [7, 3, 5, 1][(hash % 4) as usize]);
        }
        // Three queues: 512 entries 0 1 2 0 1 2 ..., so queue 0 holds one entry more.
        let reta = Reta::mlx5_of_queues(&[0, 1, 2]).unwrap();
        assert_eq!(reta.size(), 512);
        let count = |q: u16| reta.entries().iter().filter(|&&e| e == q).count();
        assert_eq!((count(0), count(1), count(2)), (171, 171, 170));
        assert_eq!(reta.queue(511), 511 % 3);
        assert_eq!(reta.queue(512), 0, "index is hash mod 512, then mod 3");
        assert_eq!(Reta::mlx5_of_queues(&[]), Err(RssError::NoQueues));
        assert!(matches!(
            Reta::mlx5_of_queues(&vec![0; 513]),
            Err(RssError::TooManyQueues { .. })
        ));
        assert_eq!(Reta::mlx5_of_queues(&[9]).unwrap().queue(0xdead_beef), 9);
    }

    #[test]
    fn test_reta() {
        let mut reta = Reta::round_robin(3, 128).unwrap();
        assert_eq!(reta.size(), 128);
        assert_eq!(&reta.entries()[..7], &[0, 1, 2, 0, 1, 2, 0]);
        // Low 7 bits select the entry: 0x...85 -> entry 5 -> queue 2.
        assert_eq!(reta.queue(0xdead_be85), 2);
        assert_eq!(reta.queue(0x0000_0080), 0);
        reta.set(5, 9).unwrap();
        assert_eq!(reta.queue(0xdead_be85), 9);
        assert_eq!(
            reta.set(128, 0),
            Err(RssError::RetaIndexOutOfRange { index: 128, size: 128 })
        );
        assert_eq!(Reta::round_robin(0, 128), Err(RssError::NoQueues));
        assert_eq!(Reta::round_robin(4, 100), Err(RssError::InvalidRetaSize { size: 100 }));
        assert_eq!(
            Reta::round_robin(4, 1024),
            Err(RssError::InvalidRetaSize { size: 1024 })
        );
        assert!(Reta::round_robin(4, 64).is_ok() && Reta::round_robin(4, 512).is_ok());
        assert_eq!(Reta::default().queue(12345), 0);
    }

    fn arb_ip_pair() -> impl Strategy<Value = (IpAddr, IpAddr)> {
        prop_oneof![
            (any::<[u8; 4]>(), any::<[u8; 4]>()).prop_map(|(a, b)| (IpAddr::from(a), IpAddr::from(b))),
            (any::<[u8; 16]>(), any::<[u8; 16]>()).prop_map(|(a, b)| (IpAddr::from(a), IpAddr::from(b))),
        ]
    }

    /// `hash_ipv4` on Microsoft's vectors, for the 4-tuple and, with ports 0, the 2-tuple.
    #[test]
    fn test_known_answers_hash_ipv4() {
        let toeplitz = Toeplitz::new(&MICROSOFT_KEY).unwrap();
        for (src, dst, ip_only, ip_ports) in KNOWN_ANSWERS {
            let (src, dst): (SocketAddr, SocketAddr) = (src.parse().unwrap(), dst.parse().unwrap());
            let (IpAddr::V4(s), IpAddr::V4(d)) = (src.ip(), dst.ip()) else {
                continue;
            };
            let addrs = (u64::from(s.to_bits()) << 32) | u64::from(d.to_bits());
            let ports = (u32::from(src.port()) << 16) | u32::from(dst.port());
            assert_eq!(toeplitz.hash_ipv4(addrs, ports), ip_ports, "{src} -> {dst}");
            assert_eq!(toeplitz.hash_ipv4(addrs, 0), ip_only, "{src} -> {dst} IP only");
        }
    }

    proptest! {
        /// `hash_ipv4` and the bit-by-bit definition agree on any 12-byte input, for
        /// keys covering it and shorter ones (which cut the input); ports 0 hash as
        /// the 8-byte 2-tuple.
        #[test]
        fn prop_hash_ipv4_matches_reference(
            key in proptest::collection::vec(any::<u8>(), MIN_KEY_BYTES..=60),
            addrs in any::<u64>(),
            ports in prop_oneof![any::<u32>(), Just(0u32)],
        ) {
            let toeplitz = Toeplitz::new(&key).unwrap();
            let mut bytes = [0u8; 12];
            bytes[..8].copy_from_slice(&addrs.to_be_bytes());
            bytes[8..].copy_from_slice(&ports.to_be_bytes());
            let reference = toeplitz.hash_reference(&bytes);
            prop_assert_eq!(toeplitz.hash_ipv4(addrs, ports), reference);
            if ports == 0 {
                prop_assert_eq!(reference, toeplitz.hash_reference(&bytes[..8]));
            }
        }

        #[test]
        fn prop_table_matches_reference(
            key in proptest::collection::vec(any::<u8>(), MIN_KEY_BYTES..=60),
            input in proptest::collection::vec(any::<u8>(), 0..=64),
        ) {
            let toeplitz = Toeplitz::new(&key).unwrap();
            prop_assert_eq!(toeplitz.hash(&input), toeplitz.hash_reference(&input));
        }

        /// `hash_flow`'s IPv4 shortcut hashes the bytes `RssInput::to_bytes` lays out, by the
        /// bit-by-bit definition; any key length (a short key cuts the input).
        #[test]
        fn prop_hash_flow_matches_reference(
            key in proptest::collection::vec(any::<u8>(), MIN_KEY_BYTES..=60),
            (src, dst) in arb_ip_pair(),
            src_port in any::<u16>(),
            dst_port in any::<u16>(),
            proto in prop_oneof![Just(IPPROTO_TCP), Just(IPPROTO_UDP), Just(IPPROTO_SCTP), Just(1u8), any::<u8>()],
            fields in prop_oneof![Just(RssFields::Ip), Just(RssFields::IpPorts)],
        ) {
            let toeplitz = Toeplitz::new(&key).unwrap();
            let flow = FlowKey { src, dst, proto, src_port, dst_port, vlan: None, vni: None };
            let bytes = RssInput::from_flow(&flow, fields).to_bytes();
            prop_assert_eq!(hash_flow(&toeplitz, &flow, fields), toeplitz.hash_reference(bytes.as_slice()));
        }

        #[test]
        fn prop_symmetric_key_is_direction_independent(
            (src, dst) in arb_ip_pair(),
            src_port in any::<u16>(),
            dst_port in any::<u16>(),
            proto in prop_oneof![Just(IPPROTO_TCP), Just(IPPROTO_UDP), Just(1u8)],
            fields in prop_oneof![Just(RssFields::Ip), Just(RssFields::IpPorts)],
            long_key in any::<bool>(),
        ) {
            let toeplitz = if long_key { Toeplitz::new(&SYMMETRIC_KEY_52) } else { Toeplitz::new(&SYMMETRIC_KEY) }.unwrap();
            let reta = Reta::round_robin(8, DEFAULT_RETA_SIZE).unwrap();
            let forward = FlowKey { src, dst, proto, src_port, dst_port, vlan: None, vni: None };
            let reverse = FlowKey { src: dst, dst: src, src_port: dst_port, dst_port: src_port, ..forward };
            let (hash_fwd, hash_rev) = (hash_flow(&toeplitz, &forward, fields), hash_flow(&toeplitz, &reverse, fields));
            prop_assert_eq!(hash_fwd, hash_rev);
            prop_assert_eq!(reta.queue(hash_fwd), reta.queue(hash_rev));
        }
    }

    /// Prints ns/hash; run with `cargo test -p nicbench-wire --release rss -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_hash_ns() {
        let toeplitz = Toeplitz::new(&MICROSOFT_KEY).unwrap();
        let mut input = [0u8; 36];
        for (len, name) in [(12usize, "IPv4+ports"), (36, "IPv6+ports")] {
            let iterations = 20_000_000u32;
            let start = std::time::Instant::now();
            let mut acc = 0u32;
            for i in 0..iterations {
                input[..4].copy_from_slice(&i.to_be_bytes());
                acc ^= toeplitz.hash(std::hint::black_box(&input[..len]));
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(iterations);
            println!("toeplitz {name}: {ns:.2} ns/hash (acc {acc:08x})");
        }
    }
}

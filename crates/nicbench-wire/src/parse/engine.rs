//! The general parser: walks the header chain one header at a time, with
//! etherparse's header slices for the headers it knows and [`super::encap`]
//! for the rest.
//!
//! Every step reads from a [`Cursor`] (the bytes still available to this
//! layer, bounded by the enclosing length field, plus their absolute offset in
//! the frame), writes what it decoded into a [`Layers`] *before* it can fail,
//! and returns either the encapsulation found at the end of the chain or the
//! [`ParseStop`]. Each header consumes at least one byte, so every loop ends.

use etherparse::err::{self as eperr, LenError};
use etherparse::{
    Ethernet2HeaderSlice, Icmpv4Slice, Icmpv6Slice, IpAuthHeaderSlice, Ipv4HeaderSlice, Ipv6FragmentHeaderSlice,
    Ipv6HeaderSlice, Ipv6RawExtHeaderSlice, SingleVlanHeaderSlice, TcpHeaderSlice, UdpHeaderSlice,
};

use super::encap::{self, MPLS_ENTRY_LEN, VXLAN_HEADER_LEN, VXLAN_UDP_PORT};
use super::{
    ethertype as et, ip_proto as ipp, Eth, Icmp, Ip, Ipv4, Ipv6, Ipv6Frag, Layer, Layers, ParseStop, ParsedFrame,
    StopReason, Tcp, Tunnel, Udp, Vlan, L4,
};

/// Where a buffer starts.
#[derive(Clone, Copy, Debug)]
pub(super) enum Start {
    Ethernet,
    Ip,
}

/// The bytes available to the current layer and their absolute offset.
#[derive(Clone, Copy)]
struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn advance(self, n_bytes: usize) -> Cursor<'a> {
        Cursor {
            data: self.data.get(n_bytes..).unwrap_or(&[]),
            at: self.at + n_bytes,
        }
    }
}

/// What the end of a header chain carries.
enum Encap<'a> {
    None,
    Vxlan {
        vni: u32,
        flags: u8,
        header_at: usize,
        inner: Cursor<'a>,
    },
    Gre {
        gre: super::Gre,
        header_at: usize,
        inner: Cursor<'a>,
    },
}

#[inline]
fn stop(layer: Layer, offset: usize, reason: StopReason) -> ParseStop {
    ParseStop { layer, offset, reason }
}

#[inline]
fn len_stop(layer: Layer, offset: usize, e: &LenError) -> ParseStop {
    stop(
        layer,
        offset,
        StopReason::Truncated {
            needed_bytes: e.required_len,
            available_bytes: e.len,
        },
    )
}

#[inline]
fn unsupported(layer: Layer, offset: usize) -> ParseStop {
    stop(layer, offset, StopReason::Unsupported)
}

/// Parses `frame` into `out`, overwriting all of it.
pub(super) fn parse_into(frame: &[u8], start: Start, out: &mut ParsedFrame) {
    *out = ParsedFrame {
        frame_len: frame.len(),
        ..ParsedFrame::default()
    };
    let cur = Cursor { data: frame, at: 0 };
    let chain = match start {
        Start::Ethernet => link(cur, &mut out.outer),
        Start::Ip => raw_ip(cur, &mut out.outer),
    };
    match chain {
        Ok(Encap::None) => {}
        Err(s) => out.stop = Some(s),
        Ok(Encap::Vxlan { vni, flags, inner, .. }) => {
            out.tunnel = Some(Tunnel::Vxlan { vni, flags });
            out.inner_offset = inner.at;
            let mut layers = Layers {
                payload_offset: inner.at,
                ..Layers::default()
            };
            out.stop = nested(link(inner, &mut layers));
            out.inner = Some(layers);
        }
        Ok(Encap::Gre { gre, inner, .. }) => {
            out.tunnel = Some(Tunnel::Gre(gre));
            let mut layers = Layers {
                payload_offset: inner.at,
                ..Layers::default()
            };
            let chain = match gre.protocol {
                et::TEB => Some(link(inner, &mut layers)),
                et::IPV4 | et::IPV6 | et::MPLS_UNICAST | et::MPLS_MULTICAST => {
                    Some(network(inner, gre.protocol, Layer::Gre, &mut layers))
                }
                // PPP (PPTP), ERSPAN, NSH…: keep protocol and key only.
                _ => None,
            };
            match chain {
                Some(chain) => {
                    out.stop = nested(chain);
                    out.inner = Some(layers);
                    out.inner_offset = inner.at;
                }
                None => out.stop = Some(unsupported(Layer::Gre, inner.at)),
            }
        }
    }
}

#[cfg(test)]
pub(super) fn parse(frame: &[u8], start: Start) -> ParsedFrame {
    let mut out = ParsedFrame::default();
    parse_into(frame, start, &mut out);
    out
}

/// Stop reason for the inner chain: a second tunnel level is not decoded.
fn nested(chain: Result<Encap<'_>, ParseStop>) -> Option<ParseStop> {
    match chain {
        Ok(Encap::None) => None,
        Ok(Encap::Vxlan { header_at, .. }) => Some(unsupported(Layer::Vxlan, header_at)),
        Ok(Encap::Gre { header_at, .. }) => Some(unsupported(Layer::Gre, header_at)),
        Err(s) => Some(s),
    }
}

fn link<'a>(cur: Cursor<'a>, layers: &mut Layers) -> Result<Encap<'a>, ParseStop> {
    let eth = Ethernet2HeaderSlice::from_slice(cur.data).map_err(|e| len_stop(Layer::Ethernet, cur.at, &e))?;
    let mut ethertype = eth.ether_type().0;
    layers.eth = Some(Eth {
        dst: eth.destination(),
        src: eth.source(),
        ethertype,
    });
    let mut cur = cur.advance(eth.slice().len());
    layers.payload_offset = cur.at;
    let mut from = Layer::Ethernet;
    while matches!(ethertype, et::VLAN | et::QINQ | et::QINQ_LEGACY) {
        let tag = SingleVlanHeaderSlice::from_slice(cur.data).map_err(|e| len_stop(Layer::Vlan, cur.at, &e))?;
        let inner_ethertype = tag.ether_type().0;
        if let Some(slot) = layers.vlans.get_mut(usize::from(layers.vlan_count)) {
            *slot = Some(Vlan {
                tpid: ethertype,
                vid: tag.vlan_identifier().value(),
                pcp: tag.priority_code_point().value(),
                dei: tag.drop_eligible_indicator(),
                inner_ethertype,
            });
        }
        layers.vlan_count = layers.vlan_count.saturating_add(1);
        ethertype = inner_ethertype;
        cur = cur.advance(tag.slice().len());
        layers.payload_offset = cur.at;
        from = Layer::Vlan;
    }
    network(cur, ethertype, from, layers)
}

/// Dispatches on an EtherType; `from` is the layer that named it.
fn network<'a>(cur: Cursor<'a>, ethertype: u16, from: Layer, layers: &mut Layers) -> Result<Encap<'a>, ParseStop> {
    layers.ethertype = ethertype;
    match ethertype {
        et::IPV4 => ipv4(cur, layers),
        et::IPV6 => ipv6(cur, layers),
        et::MPLS_UNICAST | et::MPLS_MULTICAST => mpls(cur, layers),
        _ => Err(unsupported(from, cur.at)),
    }
}

fn raw_ip<'a>(cur: Cursor<'a>, layers: &mut Layers) -> Result<Encap<'a>, ParseStop> {
    match cur.data.first().map(|b| b >> 4) {
        Some(6) => {
            layers.ethertype = et::IPV6;
            ipv6(cur, layers)
        }
        // Let the IPv4 decoder report version / length problems.
        _ => {
            layers.ethertype = et::IPV4;
            ipv4(cur, layers)
        }
    }
}

fn mpls<'a>(mut cur: Cursor<'a>, layers: &mut Layers) -> Result<Encap<'a>, ParseStop> {
    loop {
        let entry = encap::decode_mpls(cur.data).map_err(|r| stop(Layer::Mpls, cur.at, r))?;
        if let Some(slot) = layers.mpls.get_mut(usize::from(layers.mpls_count)) {
            *slot = Some(entry);
        }
        layers.mpls_count = layers.mpls_count.saturating_add(1);
        cur = cur.advance(MPLS_ENTRY_LEN);
        layers.payload_offset = cur.at;
        if entry.bottom_of_stack {
            break;
        }
    }
    // MPLS does not say what it carries; guess from the IP version nibble
    // as routers and Wireshark do. A pseudowire control word (nibble 0) or
    // anything else is not decoded.
    match cur.data.first().map(|b| b >> 4) {
        Some(4) => ipv4(cur, layers),
        Some(6) => ipv6(cur, layers),
        Some(_) => Err(unsupported(Layer::Mpls, cur.at)),
        None => Err(stop(
            Layer::Mpls,
            cur.at,
            StopReason::Truncated {
                needed_bytes: 1,
                available_bytes: 0,
            },
        )),
    }
}

fn ip_auth_err(offset: usize, e: &eperr::ip_auth::HeaderSliceError) -> ParseStop {
    match e {
        eperr::ip_auth::HeaderSliceError::Len(l) => len_stop(Layer::IpAuth, offset, l),
        eperr::ip_auth::HeaderSliceError::Content(_) => {
            stop(Layer::IpAuth, offset, StopReason::Malformed("AH payload length 0"))
        }
    }
}

/// Length of an IP payload under the lax rules: the declared length unless
/// it is impossible (shorter than the header, longer than the capture).
#[inline]
fn lax_end(declared_total: usize, header_len: usize, available: usize) -> usize {
    if declared_total < header_len || declared_total > available {
        available
    } else {
        declared_total
    }
}

fn ipv4<'a>(cur: Cursor<'a>, layers: &mut Layers) -> Result<Encap<'a>, ParseStop> {
    use eperr::ipv4::{HeaderError, HeaderSliceError};
    let h = Ipv4HeaderSlice::from_slice(cur.data).map_err(|e| match e {
        HeaderSliceError::Len(l) => len_stop(Layer::Ipv4, cur.at, &l),
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { .. }) => {
            stop(Layer::Ipv4, cur.at, StopReason::Malformed("IPv4 version field != 4"))
        }
        HeaderSliceError::Content(HeaderError::HeaderLengthSmallerThanHeader { .. }) => {
            stop(Layer::Ipv4, cur.at, StopReason::Malformed("IPv4 IHL < 5"))
        }
    })?;
    let header_len = h.slice().len();
    let end = lax_end(usize::from(h.total_len()), header_len, cur.data.len());
    let proto = h.protocol().0;
    let mut v4 = Ipv4 {
        src: h.source_addr(),
        dst: h.destination_addr(),
        proto,
        upper_proto: proto,
        tos: (h.dcp().value() << 2) | h.ecn().value(),
        ttl: h.ttl(),
        ihl: h.ihl(),
        total_len: h.total_len(),
        id: h.identification(),
        dont_frag: h.dont_fragment(),
        more_frags: h.more_fragments(),
        frag_offset: h.fragments_offset().value(),
    };
    layers.l3_offset = cur.at;
    let mut payload = Cursor {
        data: cur.data.get(header_len..end).unwrap_or(&[]),
        at: cur.at + header_len,
    };
    layers.payload_offset = payload.at;
    if v4.frag_offset != 0 {
        // Non-first fragment: the payload continues an earlier one.
        layers.ip = Some(Ip::V4(v4));
        return Ok(Encap::None);
    }
    let mut from = Layer::Ipv4;
    if proto == ipp::AH {
        match IpAuthHeaderSlice::from_slice(payload.data) {
            Ok(ah) => {
                v4.upper_proto = ah.next_header().0;
                payload = payload.advance(ah.slice().len());
                layers.payload_offset = payload.at;
                from = Layer::IpAuth;
            }
            Err(e) => {
                layers.ip = Some(Ip::V4(v4));
                return Err(ip_auth_err(payload.at, &e));
            }
        }
    }
    layers.ip = Some(Ip::V4(v4));
    transport(payload, v4.upper_proto, from, layers)
}

fn ipv6<'a>(cur: Cursor<'a>, layers: &mut Layers) -> Result<Encap<'a>, ParseStop> {
    use eperr::ipv6::HeaderSliceError;
    let h = Ipv6HeaderSlice::from_slice(cur.data).map_err(|e| match e {
        HeaderSliceError::Len(l) => len_stop(Layer::Ipv6, cur.at, &l),
        HeaderSliceError::Content(_) => stop(Layer::Ipv6, cur.at, StopReason::Malformed("IPv6 version field != 6")),
    })?;
    let header_len = h.slice().len();
    // Payload length 0 means a jumbogram (or TSO): use the capture.
    let end = lax_end(
        header_len + usize::from(h.payload_length()),
        header_len + 1,
        cur.data.len(),
    );
    let header_next_header = h.next_header().0;
    let mut v6 = Ipv6 {
        src: h.source_addr(),
        dst: h.destination_addr(),
        next_header: header_next_header,
        header_next_header,
        traffic_class: h.traffic_class(),
        flow_label: h.flow_label().value(),
        hop_limit: h.hop_limit(),
        payload_len: h.payload_length(),
        ext_headers_len: 0,
        fragment: None,
    };
    layers.l3_offset = cur.at;
    let mut payload = Cursor {
        data: cur.data.get(header_len..end).unwrap_or(&[]),
        at: cur.at + header_len,
    };
    let exts_start = payload.at;
    let mut from = Layer::Ipv6;
    let mut next = header_next_header;
    let mut non_first_fragment = false;
    let exts: Result<(), ParseStop> = loop {
        match next {
            ipp::HOP_BY_HOP | ipp::IPV6_ROUTE | ipp::IPV6_DEST_OPTS | ipp::MOBILITY | ipp::HIP | ipp::SHIM6 => {
                match Ipv6RawExtHeaderSlice::from_slice(payload.data) {
                    Ok(x) => {
                        next = x.next_header().0;
                        payload = payload.advance(x.slice().len());
                        from = Layer::Ipv6Ext;
                    }
                    Err(e) => break Err(len_stop(Layer::Ipv6Ext, payload.at, &e)),
                }
            }
            ipp::IPV6_FRAG => match Ipv6FragmentHeaderSlice::from_slice(payload.data) {
                Ok(f) => {
                    let frag = Ipv6Frag {
                        offset: f.fragment_offset().value(),
                        more_frags: f.more_fragments(),
                        id: f.identification(),
                    };
                    v6.fragment = Some(frag);
                    next = f.next_header().0;
                    payload = payload.advance(f.slice().len());
                    from = Layer::Ipv6Ext;
                    if frag.offset != 0 {
                        non_first_fragment = true;
                        break Ok(());
                    }
                }
                Err(e) => break Err(len_stop(Layer::Ipv6Ext, payload.at, &e)),
            },
            ipp::AH => match IpAuthHeaderSlice::from_slice(payload.data) {
                Ok(ah) => {
                    next = ah.next_header().0;
                    payload = payload.advance(ah.slice().len());
                    from = Layer::IpAuth;
                }
                Err(e) => break Err(ip_auth_err(payload.at, &e)),
            },
            _ => break Ok(()),
        }
    };
    v6.next_header = next;
    v6.ext_headers_len = u16::try_from(payload.at - exts_start).unwrap_or(u16::MAX);
    layers.ip = Some(Ip::V6(v6));
    layers.payload_offset = payload.at;
    exts?;
    if non_first_fragment {
        return Ok(Encap::None);
    }
    transport(payload, next, from, layers)
}

fn transport<'a>(cur: Cursor<'a>, proto: u8, from: Layer, layers: &mut Layers) -> Result<Encap<'a>, ParseStop> {
    use eperr::tcp::HeaderSliceError;
    layers.l4_offset = cur.at;
    match proto {
        ipp::TCP => {
            let t = TcpHeaderSlice::from_slice(cur.data).map_err(|e| match e {
                HeaderSliceError::Len(l) => len_stop(Layer::Tcp, cur.at, &l),
                HeaderSliceError::Content(_) => stop(Layer::Tcp, cur.at, StopReason::Malformed("TCP data offset < 5")),
            })?;
            let bytes = t.slice();
            layers.l4 = Some(L4::Tcp(Tcp {
                src_port: t.source_port(),
                dst_port: t.destination_port(),
                seq: t.sequence_number(),
                ack: t.acknowledgment_number(),
                flags: bytes.get(13).copied().unwrap_or(0),
                header_len: (bytes.len() as u8),
                window: t.window_size(),
            }));
            layers.payload_offset = cur.at + bytes.len();
            Ok(Encap::None)
        }
        ipp::UDP => {
            let u = UdpHeaderSlice::from_slice(cur.data).map_err(|e| len_stop(Layer::Udp, cur.at, &e))?;
            let dst_port = u.destination_port();
            layers.l4 = Some(L4::Udp(Udp {
                src_port: u.source_port(),
                dst_port,
                len: u.length(),
            }));
            let payload = cur.advance(u.slice().len());
            layers.payload_offset = payload.at;
            if dst_port != VXLAN_UDP_PORT {
                return Ok(Encap::None);
            }
            let (vni, flags) = encap::decode_vxlan(payload.data).map_err(|r| stop(Layer::Vxlan, payload.at, r))?;
            Ok(Encap::Vxlan {
                vni,
                flags,
                header_at: payload.at,
                inner: payload.advance(VXLAN_HEADER_LEN),
            })
        }
        ipp::ICMP => {
            let i = Icmpv4Slice::from_slice(cur.data).map_err(|e| len_stop(Layer::Icmpv4, cur.at, &e))?;
            layers.l4 = Some(L4::Icmpv4(Icmp {
                icmp_type: i.type_u8(),
                code: i.code_u8(),
            }));
            layers.payload_offset = cur.at + i.header_len();
            Ok(Encap::None)
        }
        ipp::ICMPV6 => {
            let i = Icmpv6Slice::from_slice(cur.data).map_err(|e| len_stop(Layer::Icmpv6, cur.at, &e))?;
            layers.l4 = Some(L4::Icmpv6(Icmp {
                icmp_type: i.type_u8(),
                code: i.code_u8(),
            }));
            layers.payload_offset = cur.at + i.header_len();
            Ok(Encap::None)
        }
        ipp::SCTP => {
            let s = encap::decode_sctp(cur.data).map_err(|r| stop(Layer::Sctp, cur.at, r))?;
            layers.l4 = Some(L4::Sctp(s));
            layers.payload_offset = cur.at + encap::SCTP_HEADER_LEN;
            Ok(Encap::None)
        }
        ipp::GRE => {
            let (gre, len) = encap::decode_gre(cur.data).map_err(|r| stop(Layer::Gre, cur.at, r))?;
            layers.payload_offset = cur.at + len;
            Ok(Encap::Gre {
                gre,
                header_at: cur.at,
                inner: cur.advance(len),
            })
        }
        // "No next header": the chain ends here by design.
        ipp::IPV6_NO_NEXT => Ok(Encap::None),
        _ => Err(unsupported(from, cur.at)),
    }
}

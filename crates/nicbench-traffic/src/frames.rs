//! A stream over flows given as frames (e.g. one frame per rule of a rule file, from
//! `nicbench_classify::witness`), written to a pcap.
//!
//! Timestamps, sizes and the popularity draw are the [`TrafficGen`] stream of the same config
//! (`flows` = the number of frames), so pacing and the summary are the generator's. One thing
//! differs: the first `flows` packets visit every flow once, in flow order (callers shuffle
//! the flows), so that a stream with at least as many packets as flows carries every flow —
//! a flow drawn by popularity alone may get no packet (with Zipf popularity, most would not).
//! Then packets follow the popularity draw.

use std::path::Path;

use nicbench_wire::builder::{captured_len, FrameTemplate};
use nicbench_wire::FrameSpec;

use crate::config::TrafficConfig;
use crate::error::TrafficError;
use crate::generator::{Summary, TrafficGen};
use crate::output::{PcapOutput, PROGRESS_EVERY_PACKETS};

/// Writes the stream of `config` over `flows` to a pcap at `path`. `config.flows` is set to
/// the number of flows; the stream must end on its own and hold at least one packet per flow
/// ([`TrafficError::TooFewPackets`]). `progress(packets_done)` as in [`crate::write_pcap`].
pub fn write_pcap_for_frames(
    config: &TrafficConfig,
    flows: &[FrameSpec],
    path: &Path,
    mut progress: impl FnMut(u64),
) -> Result<Summary, TrafficError> {
    let n = u32::try_from(flows.len()).map_err(|_| TrafficError::TooManyFlows { flows: u32::MAX })?;
    let config = TrafficConfig {
        flows: n,
        ..config.clone()
    };
    config.validate()?;
    if !config.is_finite() {
        return Err(TrafficError::NoStopCondition);
    }
    if let Some(expected) = config.expected_packets() {
        if expected < u64::from(n) {
            return Err(TrafficError::TooFewPackets {
                packets: expected,
                flows: n,
            });
        }
    }
    let (min_size, max_size) = config.size.min_max()?;
    let templates = flows
        .iter()
        .enumerate()
        .map(|(flow, spec)| {
            let sized = FrameSpec {
                frame_size_bytes: max_size,
                ..*spec
            };
            sized
                .check_size(min_size)
                .and_then(|()| FrameTemplate::new(&sized))
                .map_err(|source| TrafficError::FlowFrame { flow, source })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut generator = TrafficGen::new_meta_only(&config)?;
    let mut out = PcapOutput::create(path)?;
    let mut buf = vec![0u8; captured_len(max_size)];
    let mut done = 0u64;
    let mut next_report = PROGRESS_EVERY_PACKETS;
    while let Some(meta) = generator.next_meta() {
        let flow = if done < u64::from(n) {
            done as usize
        } else {
            meta.flow_index as usize
        };
        let len = templates[flow]
            .write_frame(meta.frame_size_bytes, &mut buf)
            .map_err(|source| TrafficError::FlowFrame { flow, source })?;
        out.writer.write_packet(meta.ts_ns, len as u32, &buf[..len])?;
        done += 1;
        if done == next_report {
            progress(done);
            next_report += PROGRESS_EVERY_PACKETS;
        }
    }
    if done < u64::from(n) {
        // The estimate was above what the stream held (drawn sizes): say so rather than leave
        // flows out (and no file: `out` is dropped unfinished).
        return Err(TrafficError::TooFewPackets {
            packets: done,
            flows: n,
        });
    }
    progress(done); // before the file takes its name, as in `write_pcap`
    out.finish()?;
    Ok(generator.summary())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::net::{IpAddr, Ipv4Addr};

    use nicbench_pcap::PcapSource;
    use nicbench_wire::builder::L4Spec;

    use super::*;
    use crate::config::{Popularity, Rate, SizeSpec};

    fn flow(i: u16) -> FrameSpec {
        FrameSpec {
            ip_dst: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
            l4: L4Spec::udp(i, 53),
            ..FrameSpec::default()
        }
    }

    #[test]
    fn test_every_flow_gets_a_packet_even_under_zipf_and_the_pacing_is_the_generators() {
        let dir = std::env::temp_dir().join(format!("nicbench-frames-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        let path = dir.join("f.pcap");
        let flows: Vec<FrameSpec> = (0..500).map(flow).collect();
        let config = TrafficConfig {
            size: SizeSpec::Fixed(128),
            popularity: Popularity::Zipf { s: 1.5 },
            rate: Rate::Gbps(10.0),
            packets: Some(2000),
            ..TrafficConfig::default()
        };
        let summary = write_pcap_for_frames(&config, &flows, &path, |_| {}).expect("written");
        assert_eq!(summary.packets, 2000);
        let mut src = PcapSource::open(&path).expect("readable");
        let (mut ports, mut ts) = (HashSet::new(), Vec::new());
        while let Some(p) = src.next_packet() {
            let p = p.expect("record");
            // UDP source port: Ethernet 14 + IPv4 20.
            ports.insert(u16::from_be_bytes([p.data[34], p.data[35]]));
            ts.push(p.ts_ns);
        }
        assert_eq!(ports.len(), 500, "every flow is in the file");
        assert_eq!(
            &ts[..3],
            &[0, 118, 237],
            "(128 + 20) B at 10 Gb/s, the generator's pacing"
        );
        let short = TrafficConfig {
            packets: Some(499),
            ..config
        };
        assert!(matches!(
            write_pcap_for_frames(&short, &flows, &path, |_| {}),
            Err(TrafficError::TooFewPackets {
                packets: 499,
                flows: 500
            })
        ));
        std::fs::remove_dir_all(&dir).ok();
    }
}

//! The PVP run end to end on small traces, and the mask load on hand-made megaflows. Expected
//! values are the seed's Fig. 9 structure (line 234: per flow one rule in, one rule out, one VNI
//! per rule), worked out by hand.

use super::*;
use crate::vswitch::key::tests::ipv4_frame;
use crate::vswitch::result::MegaflowOut;
use crate::vswitch::tunnel::tests::vxlan_frame;
use crate::vswitch::{CostParam, HostCosts};
use nicbench_rules::openflow::{DpFlow, DpPlacement, FieldMatch, OfField};

const FLOWS: u8 = 4;

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("nicbench-ovs-pvp-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("dir");
    d
}

fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    let mut w = nicbench_pcap::PcapWriter::create(path, 65535).expect("pcap");
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(i as u64 * 1_000_000, f.len() as u32, f).expect("write");
    }
    w.finish().expect("finish");
}

fn request(d: &std::path::Path, rules: &str, frames: &[Vec<u8>], nic: &str, tunnels: Vec<VxlanPort>) -> Request {
    std::fs::write(d.join("rules.of"), rules).expect("rules");
    write_pcap(&d.join("t.pcap"), frames);
    Request {
        openflow: d.join("rules.of").display().to_string(),
        trace: d.join("t.pcap").display().to_string(),
        nic: nic.into(),
        profiles_dir: None,
        overrides: BTreeMap::new(),
        uplink: "p0".into(),
        vm_port: "vm".into(),
        tunnels,
        tc_policy: TcPolicy::None,
        offered_gbps: None,
        flow_order: None,
    }
}

/// The underlay of `vswitch::tunnel::tests::vxlan_frame`: frames from 172.31.1.2 to 172.31.1.1 and its MAC.
fn vx() -> VxlanPort {
    VxlanPort {
        name: "vx".into(),
        remote_ip: "172.31.1.2".parse().expect("ip"),
        local_ip: "172.31.1.1".parse().expect("ip"),
        underlay: "p0".into(),
        key: None,
        dst_port: 4789,
        remote_mac: "00:00:00:00:00:00".into(),
        local_mac: "aa:55:aa:55:00:00".into(),
    }
}

fn load_of(r: &Result) -> Vec<(Ingress, u64, u64, bool, bool)> {
    let mut l: Vec<_> = r
        .load
        .masks
        .iter()
        .map(|m| (m.ingress, m.megaflows, m.offloaded, m.decap, m.encap))
        .collect();
    l.sort_by_key(|m| m.0.name());
    l
}

#[test]
fn test_vxlan_pvp_decaps_on_the_uplink_encaps_on_the_vf_and_the_vm_gets_the_inner_frames() {
    let d = dir("vxlan");
    let mut rules = String::new();
    let mut frames = Vec::new();
    let mut inner_len = 0;
    for i in 0..FLOWS {
        let (src, dst) = ([10, 0, i, 1], [20, 0, i, 1]);
        rules += &format!(
            "priority=10,in_port=vx,tun_id={},ip,nw_src=10.0.{i}.1,actions=output:vm\n",
            2 * i + 1
        );
        rules += &format!(
            "priority=10,in_port=vm,ip,nw_src=10.0.{i}.1,actions=set_tunnel:{},output:vx\n",
            2 * i + 2
        );
        let inner = ipv4_frame(src, dst, 6, 1000, 80, None);
        inner_len = inner.len();
        frames.push(vxlan_frame(u32::from(2 * i + 1), 4789, 0, 0, &inner));
    }
    // Three rounds of the flows, and one frame that is no VXLAN (the VM gets it as it is).
    let mut trace: Vec<Vec<u8>> = frames.iter().cycle().take(3 * usize::from(FLOWS)).cloned().collect();
    let plain = ipv4_frame([10, 0, 0, 1], [20, 0, 0, 1], 17, 1, 2, None);
    trace.push(plain.clone());
    let req = request(&d, &rules, &trace, "agilio-cx-25g", vec![vx()]);
    let mut reports = Vec::new();
    let r = run(&req, &mut |n| reports.push(n)).expect("run");
    let n = u64::from(FLOWS);
    // One decap megaflow per flow on the uplink, one encap megaflow per flow on the VF; the shared
    // tnl_pop megaflow of the uplink pass is not the NIC's. The plain frame goes to the underlay
    // bridge's LOCAL port (NORMAL): a mask of its own on the uplink; on the VF it hits flow 0's
    // encap megaflow (same source, the rules look at nothing else).
    assert_eq!(
        load_of(&r),
        [
            (Ingress::Uplink, n, n, true, false),
            (Ingress::Uplink, 1, 1, false, false),
            (Ingress::Vf, n, n, false, true)
        ]
    );
    let pops = r
        .datapath
        .uplink
        .megaflows
        .iter()
        .filter(|m| m.text.contains("actions:tnl_pop(4789)"))
        .count();
    assert_eq!(pops, 1, "one underlay megaflow pops every flow");
    // The VF pass saw every frame of the trace, decapsulated (the plain one as it is).
    let vf = &r.datapath.vf;
    assert_eq!(vf.packets, trace.len() as u64);
    assert_eq!(vf.bytes, 3 * n * inner_len as u64 + plain.len() as u64);
    assert_eq!(r.flows, n + 1, "the inner flows, and the plain frame's");
    let mean = (3 * n * inner_len as u64 + plain.len() as u64) as f64 / trace.len() as f64;
    assert_eq!(
        r.frame_bytes,
        (mean.round_ties_even() as u32 + 4).max(64),
        "FCS added, 64 B at least"
    );
    // The PVP model got exactly this load, with VXLAN and the inner frame size.
    let direct = pvp::predict(&pvp::Request {
        nic: "agilio-cx-25g".into(),
        profiles_dir: None,
        overrides: BTreeMap::new(),
        flows: r.flows,
        frame_bytes: r.frame_bytes,
        vxlan: true,
        offered_gbps: None,
        megaflows: Some(r.load.clone()),
        datapath: None,
        flow_order: None,
    })
    .expect("pvp");
    assert_eq!((r.pvp.mpps, r.pvp.wire_frame_bytes), (direct.mpps, r.frame_bytes + 50));
    assert!(reports.is_empty(), "fewer packets than one progress step");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn test_plain_pvp_passes_the_trace_twice_and_refuses_a_one_way_rule_set() {
    let d = dir("plain");
    let frames: Vec<Vec<u8>> = (0..20u8)
        .map(|i| ipv4_frame([10, 0, 0, i], [20, 0, 0, 1], 17, 1000, 53, None))
        .collect();
    let rules =
        "in_port=p0,ip,nw_src=10.0.0.0/8,actions=output:vm\nin_port=vm,ip,actions=output:p0\npriority=0,actions=drop\n";
    let r = run(&request(&d, rules, &frames, "connectx5-25g", Vec::new()), &mut |_| {}).expect("run");
    // One mask per ingress: the uplink rule's nw_src/8 (prefix trie) and the VM rule's in_port only.
    assert_eq!(
        load_of(&r),
        [(Ingress::Uplink, 1, 1, false, false), (Ingress::Vf, 1, 1, false, false)]
    );
    assert_eq!((r.flows, r.frame_bytes, r.datapath.vf.packets), (20, 64, 20));
    let one_way = "in_port=p0,ip,actions=output:vm\npriority=0,actions=drop\n";
    let err = run(&request(&d, one_way, &frames, "connectx5-25g", Vec::new()), &mut |_| {}).err();
    let msg = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("no packet arriving on 'vm' (vf) is forwarded"), "{msg}");
    let mut bad = request(&d, rules, &frames, "connectx5-25g", vec![vx()]);
    bad.uplink = "p9".into();
    let msg = run(&bad, &mut |_| {}).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("'vx': underlay 'p0' must be the uplink 'p9'"), "{msg}");
    let msg = run(&request(&d, rules, &[], "connectx5-25g", Vec::new()), &mut |_| {})
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(msg.contains("t.pcap: the trace has no packets"), "{msg}");
    std::fs::remove_dir_all(&d).ok();
}

fn megaflow(keys: &[(OfField, u128, u128)], actions: Vec<DpAction>, installed: bool, offloaded: bool) -> MegaflowOut {
    let keys = keys
        .iter()
        .map(|&(field, value, mask)| FieldMatch { field, value, mask })
        .collect();
    MegaflowOut {
        flow: DpFlow {
            keys,
            actions,
            placement: DpPlacement {
                offloaded: Some(offloaded),
                dp: Some("tc".into()),
            },
            ..DpFlow::default()
        },
        text: String::new(),
        reason: None,
        installed,
        first_packet: 0,
    }
}

fn pass(megaflows: Vec<MegaflowOut>) -> PassResult {
    let cost = || CostParam {
        value: 1.0,
        unit: "ns".into(),
        provenance: "test".into(),
    };
    PassResult {
        megaflows,
        refusals: BTreeMap::new(),
        packets: 0,
        bytes: 0,
        duration_s: 0.0,
        upcalls: 0,
        upcalls_per_s: None,
        flow_limit_hits: 0,
        flow_setup: Default::default(),
        hw_packets: 0,
        sw_packets: 0,
        offloaded_flows: 0,
        not_offloaded_flows: 0,
        revalidators: Default::default(),
        host_busy_core_s: 0.0,
        host_cores_busy: None,
        costs: HostCosts {
            sw_packet_ns: cost(),
            upcall_us: cost(),
            revalidate_flow_us: cost(),
            upcall_queue: cost(),
            host_datapath_cores: cost(),
        },
        caps: None,
        in_port_unmatched: None,
    }
}

#[test]
fn test_mask_load_groups_by_mask_and_reads_decap_and_encap_from_keys_and_typed_actions() {
    use OfField::*;
    let out = DpAction::Output { port: 2 };
    let push = DpAction::Tunnel {
        text: "tnl_push(tnl_port(4789),header(size=50,type=4))".into(),
    };
    let pop = DpAction::Tunnel {
        text: "tnl_pop(4789)".into(),
    };
    let exact = |src: u128| [(InPort, 1, 0xffff_ffff), (NwSrc, src, 0xffff_ffff)];
    let decap = |vni: u128| [(TunId, vni, u128::from(u64::MAX)), (InPort, 4789, 0xffff_ffff)];
    let p = pass(vec![
        megaflow(&exact(1), vec![out.clone()], true, true),
        megaflow(&exact(2), vec![out.clone()], true, false), // same mask: one tc priority
        megaflow(&exact(3), vec![out.clone()], false, true), // deleted by a revalidator: not counted
        megaflow(&[(InPort, 1, 0xffff_ffff)], vec![pop], true, true), // the userspace decap step
        megaflow(&decap(7), vec![out.clone()], true, true),
        megaflow(&decap(8), vec![out.clone()], true, true),
        megaflow(&exact(9), vec![push.clone(), out.clone()], true, true),
        megaflow(
            &exact(9),
            vec![DpAction::SetTunnel { id: 5, src: 1, dst: 2 }, out],
            true,
            false,
        ),
    ]);
    let got: Vec<_> = load::mask_load(&p, Ingress::Vf)
        .into_iter()
        .map(|m| (m.ingress, m.megaflows, m.offloaded, m.decap, m.encap))
        .collect();
    assert_eq!(
        got,
        [
            (Ingress::Vf, 2, 1, false, false),
            (Ingress::Vf, 2, 2, true, false),
            (Ingress::Vf, 2, 1, false, true),
        ]
    );
}

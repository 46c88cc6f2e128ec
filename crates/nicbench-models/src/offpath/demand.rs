//! Per-request demands of one flow on every resource of the off-path NIC, plus the
//! flow's unloaded latency segments and its requester-side posting rate.
//!
//! Demands are expressed as a fraction of the resource's capacity per request
//! (seconds of the whole resource), so a mix is feasible at `X` req/s iff
//! `X · Σ_flows share · load ≤ 1` for every resource.
//!
//! Mechanisms (seed 004):
//! - NIC cores (Little's law): a request holds a context of the NIC cores (`nic_cores`:
//!   `nic_core_contexts` of them) for its service time plus its PCIe stalls (a DMA read waits
//!   a round trip; a posted write waits one way before the ACK), plus per-TLP work, plus
//!   head-of-line blocking when a DMA's TLPs overflow the completion tracking (large READs with
//!   128-B completions, §3.2; host↔SoC requests relay the data, holding the larger of the read
//!   and write TLP counts, §3.3). On a SmartNIC each endpoint (host, SoC: separate PCIe
//!   functions) can use only `nic_core_endpoint_fraction` of the contexts (`nic_cores_host`,
//!   `nic_cores_soc`); of a request's time, the processing and a fraction
//!   `nic_stall_shared_fraction` of its stalls occupy the shared cores (`nic_cores`): a request
//!   waiting on PCIe holds its context, not a core. So 0-B requests to both endpoints gain only
//!   the reserved rest (§4: 195 vs ~176 Mpps), while small READs, which mostly stall, gain more
//!   (§4: up to 1.45x the slower path, and "typically faster than each").
//! - PCIe: TLPs from `pcie.rs`; host↔SoC requests cross PCIe1 twice (Table 3).
//! - DRAM: bank concurrency; a small address range touches few banks, unless the cache
//!   (DDIO) absorbs the accesses (§3.2, Fig. 7); and bandwidth.
//! - CPUs: two-sided messages cost responder core time (`*_message_ns`, throughput) and put that
//!   time, plus two DRAM reads where the responder has no DDIO (the CQE and the message land in
//!   DRAM, not in its cache: the SoC, §3.2), and the reply's MMIO flight on the latency
//!   (§3.2: SEND to the SoC is 21-30% slower); requesters post by MMIO, one per
//!   request (BlueFlame) or one doorbell per batch plus a DMA fetch per WQE (§3.3, Fig. 10).

use super::params::OffpathParams;
use super::pcie::{self, LinkDir, PcieLoad};
use super::request::{CommPath, Endpoint, Flow, Requester, Verb};
use crate::error::ModelError;

/// The resources of the model, in tie-break order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    NetworkIn,
    NetworkOut,
    NicCores,
    NicCoresHost,
    NicCoresSoc,
    Pcie1Up,
    Pcie1Down,
    Pcie0Up,
    Pcie0Down,
    HostDram,
    HostDramBw,
    SocDram,
    SocDramBw,
    HostCpu,
    SocCpu,
}

pub const N_RESOURCES: usize = 15;

impl Resource {
    pub const ALL: [Resource; N_RESOURCES] = [
        Resource::NetworkIn,
        Resource::NetworkOut,
        Resource::NicCores,
        Resource::NicCoresHost,
        Resource::NicCoresSoc,
        Resource::Pcie1Up,
        Resource::Pcie1Down,
        Resource::Pcie0Up,
        Resource::Pcie0Down,
        Resource::HostDram,
        Resource::HostDramBw,
        Resource::SocDram,
        Resource::SocDramBw,
        Resource::HostCpu,
        Resource::SocCpu,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Resource::NetworkIn => "network_in",
            Resource::NetworkOut => "network_out",
            Resource::NicCores => "nic_cores",
            Resource::NicCoresHost => "nic_cores_host",
            Resource::NicCoresSoc => "nic_cores_soc",
            Resource::Pcie1Up => "pcie1_up",
            Resource::Pcie1Down => "pcie1_down",
            Resource::Pcie0Up => "pcie0_up",
            Resource::Pcie0Down => "pcie0_down",
            Resource::HostDram => "host_dram",
            Resource::HostDramBw => "host_dram_bw",
            Resource::SocDram => "soc_dram",
            Resource::SocDramBw => "soc_dram_bw",
            Resource::HostCpu => "host_cpu",
            Resource::SocCpu => "soc_cpu",
        }
    }

    fn of_link(dir: LinkDir) -> Resource {
        match dir {
            LinkDir::Pcie0Up => Resource::Pcie0Up,
            LinkDir::Pcie0Down => Resource::Pcie0Down,
            LinkDir::Pcie1Up => Resource::Pcie1Up,
            LinkDir::Pcie1Down => Resource::Pcie1Down,
        }
    }
}

/// What one request of a flow costs, and what the flow's requesters can post.
#[derive(Clone, Debug, PartialEq)]
pub struct Demand {
    /// Fraction of each resource's capacity-second one request takes.
    pub load: [f64; N_RESOURCES],
    /// TLPs and bytes per link direction, per request.
    pub pcie: PcieLoad,
    /// Unloaded end-to-end latency \[ns\].
    pub latency_ns: f64,
    /// Requester CPU time to post one request (MMIO share included) \[ns\].
    pub posting_ns: f64,
    /// Requests/s the flow's requester threads can post.
    pub requester_rate: f64,
    /// Requests/s the requesters would post with BlueFlame (batch 1) and with a batch of 32.
    pub requester_rate_no_batch: f64,
    pub requester_rate_batch32: f64,
    /// TLPs of the largest DMA of a request that overflow the completion buffer.
    pub overflow_tlps: f64,
    /// SoC DRAM banks the flow's SoC-memory writes can use (None: it writes no SoC memory).
    pub soc_write_banks: Option<f64>,
}

/// Accumulates a request's costs.
struct Builder<'a> {
    p: &'a OffpathParams,
    flow: &'a Flow,
    pcie: PcieLoad,
    context_ns: [f64; 2],
    /// Part of `context_ns` spent waiting (PCIe stalls, head-of-line blocking) \[ns\].
    stall_ns: f64,
    network_in_bytes: f64,
    network_out_bytes: f64,
    dram_bank_ns: [f64; 2],
    dram_bytes: [f64; 2],
    cpu_ns: [f64; 2],
    overflow_tlps: f64,
    soc_write_banks: Option<f64>,
}

fn ep_index(e: Endpoint) -> usize {
    match e {
        Endpoint::Host => 0,
        Endpoint::Soc => 1,
    }
}

impl<'a> Builder<'a> {
    /// TLPs the NIC itself sends or receives for `load` (on the link next to the NIC).
    fn nic_tlps(&self, load: &PcieLoad) -> f64 {
        let (up, down) = if self.p.soc_present() {
            (LinkDir::Pcie1Up, LinkDir::Pcie1Down)
        } else {
            (LinkDir::Pcie0Up, LinkDir::Pcie0Down)
        };
        load.tlps[up.index()] + load.tlps[down.index()]
    }

    /// DRAM cost of touching `bytes` of `mem` (write or read) within the flow's address range.
    fn memory_access(&mut self, mem: Endpoint, bytes: f64, write: bool) {
        if bytes <= 0.0 {
            return;
        }
        let p = self.p;
        let (ddio, interleave, banks_total, bank_ns) = match mem {
            Endpoint::Host => (
                p.host_ddio_bytes,
                p.host_dram_interleave_bytes,
                p.host_dram_channels * p.host_dram_banks_per_channel,
                if write {
                    p.host_dram_bank_write_ns
                } else {
                    p.host_dram_bank_read_ns
                },
            ),
            Endpoint::Soc => (
                p.soc_ddio_bytes,
                p.soc_dram_interleave_bytes,
                p.soc_dram_channels * p.soc_dram_banks_per_channel,
                if write {
                    p.soc_dram_bank_write_ns
                } else {
                    p.soc_dram_bank_read_ns
                },
            ),
        };
        let range = self.flow.address_range_bytes.max(bytes);
        // A range the cache can hold is served from it (DDIO): the DRAM sees nothing.
        if range <= ddio {
            return;
        }
        let banks = (range / interleave).ceil().clamp(1.0, banks_total);
        let chunks = (bytes / interleave).ceil();
        let i = ep_index(mem);
        // Bank-seconds spread over the banks the range maps to.
        self.dram_bank_ns[i] += chunks * bank_ns * banks_total / banks;
        self.dram_bytes[i] += bytes;
        if write && mem == Endpoint::Soc {
            self.soc_write_banks = Some(self.soc_write_banks.map_or(banks, |b: f64| b.min(banks)));
        }
    }

    /// The NIC DMA-reads `bytes` from `mem` as part of a transfer it relays on as
    /// `relay_tlps` write TLPs (0: not relayed); the reading context stalls a round trip.
    /// Returns the context time \[ns\].
    fn dma_read(&mut self, mem: Endpoint, bytes: f64, relay_tlps: f64) -> f64 {
        if bytes <= 0.0 {
            return 0.0;
        }
        let p = self.p;
        let load = pcie::dma_read(p, mem, bytes);
        let tlps = self.nic_tlps(&load);
        let completions = pcie::tlp_count(bytes, pcie::mps(p, mem));
        // A byte sits in the buffer once: as a completion until it is relayed as a write, so
        // the buffer must hold the larger of the two TLP counts of the transfer (not their sum).
        let overflow = (completions.max(relay_tlps) - p.completion_buffer_entries).max(0.0);
        self.overflow_tlps = self.overflow_tlps.max(overflow);
        self.pcie.merge(&load);
        self.memory_access(mem, bytes, false);
        // The reading context waits for the round trip and the memory; a host read also for the
        // root complex (seed §3.2: reads of SoC memory, "closer" to the switch, beat even the RNIC's).
        let stall = 2.0 * pcie::one_way_ns(p, mem)
            + memory_read_ns(p, mem)
            + match mem {
                Endpoint::Host => p.host_dma_read_occupancy_ns,
                Endpoint::Soc => 0.0,
            }
            + overflow * p.completion_overflow_ns;
        self.stall_ns += stall;
        stall + tlps * p.nic_tlp_ns
    }

    /// The NIC DMA-writes `bytes` into `mem` (posted); the context waits one way for the
    /// write to reach the memory side before it acknowledges. Returns the context time \[ns\].
    fn dma_write(&mut self, mem: Endpoint, bytes: f64) -> f64 {
        if bytes <= 0.0 {
            return 0.0;
        }
        let load = pcie::dma_write(self.p, mem, bytes);
        let tlps = self.nic_tlps(&load);
        self.pcie.merge(&load);
        self.memory_access(mem, bytes, true);
        let stall = pcie::one_way_ns(self.p, mem);
        self.stall_ns += stall;
        stall + tlps * self.p.nic_tlp_ns
    }

    fn hold(&mut self, e: Endpoint, ns: f64) {
        self.context_ns[ep_index(e)] += ns;
    }

    /// Network packets for a message of `bytes` (at least one).
    fn packets(&self, bytes: f64) -> f64 {
        (bytes / self.p.network_mtu_bytes).ceil().max(1.0)
    }
}

/// Wire bytes of a message of `payload` bytes with `ext` extra header bytes in its first packet.
fn wire_bytes(p: &OffpathParams, packets: f64, payload: f64, ext: f64) -> f64 {
    packets * p.network_packet_overhead_bytes + ext + payload
}

/// Requester-side MMIO cost model: (posting ns per request, requests/s of all threads).
pub fn requester_rate(p: &OffpathParams, who: Requester, machines: f64, threads: f64, batch: f64) -> (f64, f64) {
    let (post, blueflame, doorbell, fetch) = match who {
        // On the x86 clients and host a doorbell costs what a BlueFlame post does: mlx5's
        // post_send issues either after the same barrier and doorbell record (rdma-core), and
        // on x86 that barrier is a compiler barrier only. The A72 SoC has its own doorbell cost.
        Requester::Client => (
            p.client_post_cpu_ns,
            p.client_blueflame_mmio_ns,
            p.client_blueflame_mmio_ns,
            p.client_wqe_fetch_ns,
        ),
        Requester::Host => (
            p.host_post_cpu_ns,
            p.host_blueflame_mmio_ns,
            p.host_blueflame_mmio_ns,
            p.host_wqe_fetch_ns,
        ),
        Requester::Soc => (
            p.soc_post_cpu_ns,
            p.soc_blueflame_mmio_ns,
            p.soc_doorbell_mmio_ns,
            p.soc_wqe_fetch_ns,
        ),
    };
    // Batch 1: the WQE travels inline in one BlueFlame MMIO. Batch b: the thread writes b
    // WQEs to memory, rings one doorbell, and the NIC fetches the WQEs by DMA before the
    // thread's send queue advances (the fetch is slow from host memory, fast from SoC's).
    let per_batch_ns = if batch <= 1.0 {
        post + blueflame
    } else {
        batch * (post + fetch) + doorbell
    };
    let per_request_ns = per_batch_ns / batch.max(1.0);
    let rate = if per_request_ns > 0.0 {
        machines * threads * 1e9 / per_request_ns
    } else {
        f64::INFINITY
    };
    (per_request_ns, rate)
}

/// Flight time of a requester's MMIO write to the NIC (adds latency, not thread time) \[ns\].
pub fn mmio_latency_ns(p: &OffpathParams, who: Requester) -> f64 {
    match who {
        Requester::Client => p.client_mmio_latency_ns,
        Requester::Host => p.host_mmio_latency_ns,
        Requester::Soc => p.soc_mmio_latency_ns,
    }
}

/// Demands of one request of `flow`.
pub fn demand(p: &OffpathParams, flow: &Flow) -> Result<Demand, ModelError> {
    if !p.soc_present() && flow.path != CommPath::ClientHost {
        return Err(ModelError::Scenario(format!(
            "path {} needs a SmartNIC with a SoC; this profile is a plain RNIC (only client->host)",
            flow.path.name()
        )));
    }
    let n = flow.payload_bytes;
    let mut b = Builder {
        p,
        flow,
        pcie: PcieLoad::default(),
        context_ns: [0.0; 2],
        stall_ns: 0.0,
        network_in_bytes: 0.0,
        network_out_bytes: 0.0,
        dram_bank_ns: [0.0; 2],
        dram_bytes: [0.0; 2],
        cpu_ns: [0.0; 2],
        overflow_tlps: 0.0,
        soc_write_banks: None,
    };
    let (post_cpu_ns, requester) = requester_rate(
        p,
        flow.path.requester(),
        flow.machines,
        flow.threads,
        flow.doorbell_batch,
    );
    let posting_ns = post_cpu_ns + mmio_latency_ns(p, flow.path.requester());
    let (_, no_batch) = requester_rate(p, flow.path.requester(), flow.machines, flow.threads, 1.0);
    let (_, batch32) = requester_rate(p, flow.path.requester(), flow.machines, flow.threads, 32.0);
    // Serialisation of a message on one 100G port (a QP uses one port).
    let wire_time_ns = |bytes: f64| bytes * 8.0 / p.network_port_gbps;
    let pcie_time_ns = |bytes: f64| bytes * 1e9 / pcie::link_bytes_per_s(p);
    let ack = p.network_packet_overhead_bytes + 4.0; // AETH
    let mut latency_ns = posting_ns + p.nic_pipeline_ns;

    if flow.path.is_intra() {
        // ③: the NIC is requester and responder; both memories sit behind it.
        let q = flow.path.requester().endpoint().unwrap_or(Endpoint::Host);
        let r = q.other();
        // Posting: BlueFlame WQE by MMIO, or a doorbell per batch plus the WQE fetch.
        if flow.doorbell_batch <= 1.0 {
            b.pcie.merge(&pcie::mmio_write(p, q, p.wqe_bytes));
        } else {
            let mut per_batch = pcie::mmio_write(p, q, 8.0);
            per_batch.merge(&pcie::dma_read(p, q, flow.doorbell_batch * p.wqe_bytes));
            b.pcie.merge(&per_batch.scaled(1.0 / flow.doorbell_batch));
        }
        b.hold(q, p.nic_requester_service_ns);
        latency_ns += pcie::one_way_ns(p, q) + p.loopback_ns;
        if flow.doorbell_batch > 1.0 {
            // The NIC fetches the batched WQEs from the requester's memory before starting.
            latency_ns += 2.0 * pcie::one_way_ns(p, q) + memory_read_ns(p, q);
        }
        let (src, dst) = match flow.verb {
            Verb::Read => (r, q),
            Verb::Write | Verb::Send => (q, r),
        };
        // The relay holds the read completions and the writes to the other side.
        let relay = pcie::tlp_count(n, pcie::mps(p, dst));
        let service = match flow.verb {
            Verb::Read | Verb::Send => p.nic_read_service_ns,
            Verb::Write => p.nic_write_service_ns,
        };
        let read_ns = b.dma_read(src, n, relay);
        b.hold(src, read_ns);
        let write_ns = b.dma_write(dst, n);
        b.hold(dst, write_ns);
        b.hold(r, service);
        if n > 0.0 {
            latency_ns += 2.0 * pcie::one_way_ns(p, src)
                + memory_read_ns(p, src)
                + pcie::one_way_ns(p, dst)
                + 2.0 * pcie_time_ns(n);
        }
        if flow.verb == Verb::Write {
            // The ACK returns through the loopback; the CQE goes to the requester.
            latency_ns += p.loopback_ns + pcie::one_way_ns(p, q);
        }
        if flow.verb == Verb::Send {
            // Responder CPU handles the message and echoes it back the same way.
            let cpu = message_ns(p, r);
            b.cpu_ns[ep_index(r)] += cpu;
            let cqe_ns = b.dma_write(r, 64.0);
            b.hold(r, cqe_ns);
            let inline = n <= p.max_inline_bytes;
            b.pcie
                .merge(&pcie::mmio_write(p, r, p.wqe_bytes + if inline { n } else { 0.0 }));
            if !inline {
                let back_read = b.dma_read(r, n, pcie::tlp_count(n, pcie::mps(p, q)));
                b.hold(r, back_read);
            }
            let back_write = b.dma_write(q, n);
            b.hold(q, back_write);
            latency_ns += message_latency_ns(p, r)
                + blueflame_ns(p, r)
                + mmio_latency_ns(p, requester_at(r))
                + pcie::one_way_ns(p, r)
                + p.loopback_ns
                + p.nic_pipeline_ns
                + if n > p.max_inline_bytes {
                    2.0 * pcie::one_way_ns(p, r) + memory_read_ns(p, r) + pcie::one_way_ns(p, q) + 2.0 * pcie_time_ns(n)
                } else if n > 0.0 {
                    pcie::one_way_ns(p, q) + pcie_time_ns(n)
                } else {
                    0.0
                };
        }
    } else {
        // ① / ②: a client across the network; the NIC is the responder only.
        let e = flow.path.responder();
        latency_ns += p.client_side_ns + 2.0 * p.network_one_way_ns;
        match flow.verb {
            Verb::Read => {
                b.network_in_bytes += wire_bytes(p, 1.0, 0.0, p.network_rdma_ext_header_bytes);
                b.network_out_bytes += wire_bytes(p, b.packets(n), n, 4.0);
                let read_ns = b.dma_read(e, n, 0.0);
                b.hold(e, p.nic_read_service_ns + read_ns);
                if n > 0.0 {
                    latency_ns += 2.0 * pcie::one_way_ns(p, e) + memory_read_ns(p, e) + pcie_time_ns(n);
                }
                latency_ns += wire_time_ns(n);
            }
            Verb::Write => {
                b.network_in_bytes += wire_bytes(p, b.packets(n), n, p.network_rdma_ext_header_bytes);
                b.network_out_bytes += ack;
                let write_ns = b.dma_write(e, n);
                b.hold(e, p.nic_write_service_ns + write_ns);
                if n > 0.0 {
                    latency_ns += pcie::one_way_ns(p, e) + pcie_time_ns(n);
                }
                latency_ns += wire_time_ns(n);
            }
            Verb::Send => {
                // Echo server (seed §3): the message lands in a RECV buffer with a CQE,
                // a responder core handles it and posts a reply of the same size.
                let packets = b.packets(n);
                b.network_in_bytes += wire_bytes(p, packets, n, 0.0);
                b.network_out_bytes += wire_bytes(p, packets, n, 0.0);
                // A two-sided message costs the NIC cores what a 0-B READ does (seed §2.1: the
                // host bounds two-sided traffic at 87 Mpps "while NIC cores can process more than
                // 195 Mpps"), plus its DMA writes (message, CQE) and, for a large reply, a DMA read.
                let mut hold = p.nic_read_service_ns;
                hold += b.dma_write(e, n);
                hold += b.dma_write(e, 64.0);
                // A small reply travels inline in its BlueFlame WQE; a larger one is DMA-read.
                let inline = n <= p.max_inline_bytes;
                b.pcie
                    .merge(&pcie::mmio_write(p, e, p.wqe_bytes + if inline { n } else { 0.0 }));
                if !inline {
                    hold += b.dma_read(e, n, 0.0);
                }
                b.hold(e, hold);
                let cpu = message_ns(p, e);
                b.cpu_ns[ep_index(e)] += cpu;
                latency_ns += 2.0 * pcie::one_way_ns(p, e) // message + CQE in, then the reply MMIO
                    + message_latency_ns(p, e)
                    + blueflame_ns(p, e)
                    + mmio_latency_ns(p, requester_at(e))
                    + p.nic_pipeline_ns
                    + 2.0 * wire_time_ns(n)
                    + if n > p.max_inline_bytes {
                        2.0 * pcie::one_way_ns(p, e) + memory_read_ns(p, e) + 2.0 * pcie_time_ns(n)
                    } else {
                        2.0 * pcie_time_ns(n)
                    };
            }
        }
    }

    let mut load = [0.0; N_RESOURCES];
    let net_bytes_per_s = p.network_ports * p.network_port_gbps * p.network_efficiency * 1e9 / 8.0;
    load[Resource::NetworkIn.index()] = b.network_in_bytes / net_bytes_per_s;
    load[Resource::NetworkOut.index()] = b.network_out_bytes / net_bytes_per_s;
    let contexts = p.nic_core_contexts;
    let [host_ctx_ns, soc_ctx_ns] = b.context_ns;
    // A stalled request holds a context of its endpoint's pool for its whole wait, but only part
    // of the wait (`nic_stall_shared_fraction`) occupies the shared cores.
    let shared_ns = host_ctx_ns + soc_ctx_ns - (1.0 - p.nic_stall_shared_fraction) * b.stall_ns;
    load[Resource::NicCores.index()] = shared_ns.max(0.0) * 1e-9 / contexts;
    // An RNIC has one endpoint: it may use every context (its pool is the whole of nic_cores).
    let pool = contexts
        * if p.soc_present() {
            p.nic_core_endpoint_fraction
        } else {
            1.0
        };
    load[Resource::NicCoresHost.index()] = host_ctx_ns * 1e-9 / pool;
    load[Resource::NicCoresSoc.index()] = soc_ctx_ns * 1e-9 / pool;
    let link = pcie::link_bytes_per_s(p);
    for dir in LinkDir::ALL {
        load[Resource::of_link(dir).index()] = b.pcie.bytes[dir.index()] / link;
    }
    let host_banks = p.host_dram_channels * p.host_dram_banks_per_channel;
    let soc_banks = p.soc_dram_channels * p.soc_dram_banks_per_channel;
    load[Resource::HostDram.index()] = b.dram_bank_ns[0] * 1e-9 / host_banks;
    load[Resource::SocDram.index()] = b.dram_bank_ns[1] * 1e-9 / soc_banks;
    load[Resource::HostDramBw.index()] = b.dram_bytes[0] * 8.0 / (p.host_dram_gbps * 1e9);
    load[Resource::SocDramBw.index()] = b.dram_bytes[1] * 8.0 / (p.soc_dram_gbps * 1e9);
    load[Resource::HostCpu.index()] = b.cpu_ns[0] * 1e-9 / p.host_cores;
    load[Resource::SocCpu.index()] = b.cpu_ns[1] * 1e-9 / p.soc_cores;

    Ok(Demand {
        load,
        pcie: b.pcie,
        latency_ns,
        posting_ns,
        requester_rate: requester,
        requester_rate_no_batch: no_batch,
        requester_rate_batch32: batch32,
        overflow_tlps: b.overflow_tlps,
        soc_write_banks: b.soc_write_banks,
    })
}

fn memory_read_ns(p: &OffpathParams, mem: Endpoint) -> f64 {
    match mem {
        Endpoint::Host => p.host_memory_read_ns,
        Endpoint::Soc => p.soc_memory_read_ns,
    }
}

/// Responder software time on the critical path of one two-sided echo \[ns\]: the core's
/// handling time, plus, without DDIO, a DRAM read for the CQE it polls and one for the message
/// (with DDIO the NIC's writes of both land in the LLC).
fn message_latency_ns(p: &OffpathParams, mem: Endpoint) -> f64 {
    let ddio_bytes = match mem {
        Endpoint::Host => p.host_ddio_bytes,
        Endpoint::Soc => p.soc_ddio_bytes,
    };
    message_ns(p, mem)
        + if ddio_bytes > 0.0 {
            0.0
        } else {
            2.0 * memory_read_ns(p, mem)
        }
}

/// The CPU next to a memory, as a poster of MMIO writes.
fn requester_at(mem: Endpoint) -> Requester {
    match mem {
        Endpoint::Host => Requester::Host,
        Endpoint::Soc => Requester::Soc,
    }
}

fn message_ns(p: &OffpathParams, mem: Endpoint) -> f64 {
    match mem {
        Endpoint::Host => p.host_message_ns,
        Endpoint::Soc => p.soc_message_ns,
    }
}

/// Time for a host/SoC core to post one reply by BlueFlame MMIO \[ns\].
fn blueflame_ns(p: &OffpathParams, mem: Endpoint) -> f64 {
    match mem {
        Endpoint::Host => p.host_post_cpu_ns + p.host_blueflame_mmio_ns,
        Endpoint::Soc => p.soc_post_cpu_ns + p.soc_blueflame_mmio_ns,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::offpath::params::tests::params;
    use crate::offpath::request::DEFAULT_ADDRESS_RANGE_BYTES;

    pub(crate) fn bf2() -> OffpathParams {
        params("bluefield2")
    }

    pub(crate) fn flow(path: CommPath, verb: Verb, n: f64) -> Flow {
        let (machines, threads) = path.requester().default_parallelism();
        Flow {
            path,
            verb,
            payload_bytes: n,
            share: 1.0,
            machines,
            threads,
            doorbell_batch: 1.0,
            address_range_bytes: DEFAULT_ADDRESS_RANGE_BYTES,
            offered_mpps: None,
        }
    }

    fn data_tlps_per_request(p: &OffpathParams, f: &Flow) -> [f64; 4] {
        // Data TLPs = all TLPs minus the read requests (one per MRRS of each DMA read).
        let d = demand(p, f).expect("demand");
        let mut t = d.pcie.tlps;
        let reqs = pcie::tlp_count(f.payload_bytes, p.soc_mrrs_bytes.min(p.host_mrrs_bytes));
        match (f.path, f.verb) {
            (CommPath::SocHost, Verb::Write) => t[LinkDir::Pcie1Up.index()] -= reqs, // reads SoC memory
            (CommPath::SocHost, Verb::Read) => {
                t[LinkDir::Pcie1Up.index()] -= reqs; // reads host memory: requests up both links
                t[LinkDir::Pcie0Up.index()] -= reqs;
            }
            _ => {}
        }
        t[LinkDir::Pcie1Down.index()] -= 1.0; // the requester's BlueFlame MMIO
        t
    }

    #[test]
    fn test_s2h_200gbps_needs_195_49_49_mpps() {
        // Seed §3.3: "transfer data at 200 Gbps from SoC to the host": 200 Gb/s = 25 GB/s.
        // The NIC reads SoC memory in 128-B completions: 25e9 / 128 = 195.3 Mpps on PCIe1
        // (down), writes host memory in 512-B TLPs: 25e9 / 512 = 48.8 Mpps on PCIe1 (up)
        // and 48.8 Mpps on PCIe0 (up): 293 Mpps in all, 6x path 1's 48.8 and 1.5x path 2's 195.3.
        let p = bf2();
        let f = flow(CommPath::SocHost, Verb::Write, 4096.0);
        let per_request = data_tlps_per_request(&p, &f);
        let requests_per_s = 25e9 / 4096.0;
        let mpps = per_request.map(|t| t * requests_per_s / 1e6);
        let [pcie0_up, pcie0_down, pcie1_up, pcie1_down] = mpps;
        assert!((pcie1_down - 195.3125).abs() < 1e-9, "{mpps:?}");
        assert!((pcie1_up - 48.828125).abs() < 1e-9, "{mpps:?}");
        assert!((pcie0_up - 48.828125).abs() < 1e-9, "{mpps:?}");
        assert_eq!(pcie0_down, 0.0);
        let total: f64 = mpps.iter().sum();
        assert!((total - 292.97).abs() < 0.01, "{total}");
        // Path 1 (client READ of host memory) at 200 Gb/s: 48.8 Mpps per link → 6x fewer.
        let one = data_tlps_per_request(&p, &flow(CommPath::ClientHost, Verb::Write, 4096.0));
        assert!((total / (one[LinkDir::Pcie0Up.index()] * requests_per_s / 1e6) - 6.0).abs() < 1e-9);
        let two = data_tlps_per_request(&p, &flow(CommPath::ClientSoc, Verb::Write, 4096.0));
        assert!((total / (two[LinkDir::Pcie1Up.index()] * requests_per_s / 1e6) - 1.5).abs() < 1e-9);
        // S2H READ mirrors it: host completions come down PCIe0 and PCIe1, SoC writes go up PCIe1.
        let r = data_tlps_per_request(&p, &flow(CommPath::SocHost, Verb::Read, 4096.0));
        assert_eq!(r, [0.0, 8.0, 32.0, 8.0]);
        // The model's own data-TLP count (what the response reports as pcie_data_mpps) agrees
        // with the hand arithmetic: completions and DMA writes only.
        let d = demand(&p, &f).expect("demand");
        assert_eq!(d.pcie.data_tlps, [8.0, 0.0, 8.0, 32.0]);
    }

    #[test]
    fn test_path3_crosses_pcie1_twice_and_paths_1_2_once() {
        let p = bf2();
        let n = 65536.0;
        let bytes = |path, verb| demand(&p, &flow(path, verb, n)).expect("demand").pcie.bytes;
        let h2s = bytes(CommPath::HostSoc, Verb::Write);
        // H2S WRITE: data comes down PCIe0 and PCIe1 (host completions) and goes up PCIe1 to the SoC.
        assert!(
            h2s[LinkDir::Pcie1Up.index()] > n
                && h2s[LinkDir::Pcie1Down.index()] > n
                && h2s[LinkDir::Pcie0Down.index()] > n
        );
        let c1 = bytes(CommPath::ClientHost, Verb::Write);
        assert!(c1[LinkDir::Pcie1Up.index()] > n && c1[LinkDir::Pcie1Down.index()] < 0.01 * n);
        let c2 = bytes(CommPath::ClientSoc, Verb::Read);
        assert!(
            c2[LinkDir::Pcie1Down.index()] > n
                && c2[LinkDir::Pcie0Down.index()] == 0.0
                && c2[LinkDir::Pcie0Up.index()] == 0.0
        );
        // 128-B completions cost 20 B each: 65536 B from SoC memory = 512 TLPs → 65536 + 512 × 20.
        assert_eq!(c2[LinkDir::Pcie1Down.index()], 65536.0 + 512.0 * 20.0);
    }

    #[test]
    fn test_skewed_writes_hit_soc_banks_not_host_ddio() {
        // Seed Fig. 7: WRITE to SoC memory in a 1.5 KB range drops to 22.7 M/s (77.9 M/s at 48 KB).
        let p = bf2();
        let mut f = flow(CommPath::ClientSoc, Verb::Write, 64.0);
        f.address_range_bytes = 1536.0;
        let skewed = demand(&p, &f).expect("demand");
        // 1536 / 256-B interleave = 6 banks, each busy soc_dram_bank_write_ns per write (fitted to
        // the 22.7 M/s): 6 / 264 ns = 22.7 M/s.
        assert_eq!(skewed.soc_write_banks, Some(6.0));
        let soc_rate = 1.0 / skewed.load[Resource::SocDram.index()];
        assert!(
            (soc_rate - 6.0 / (p.soc_dram_bank_write_ns * 1e-9)).abs() < 1e-3,
            "{soc_rate}"
        );
        assert!((soc_rate / 22.7e6 - 1.0).abs() < 0.02, "{soc_rate}");
        f.address_range_bytes = 48.0 * 1024.0;
        let wide = demand(&p, &f).expect("demand");
        assert!(
            1.0 / wide.load[Resource::SocDram.index()] > 100e6,
            "48 KB spreads over all 32 banks"
        );
        // Host memory with DDIO: the skewed range sits in the LLC, the DRAM sees nothing.
        let mut h = flow(CommPath::ClientHost, Verb::Write, 64.0);
        h.address_range_bytes = 1536.0;
        assert_eq!(demand(&p, &h).expect("demand").load[Resource::HostDram.index()], 0.0);
        // Reads are cheaper per bank: 6 / 120 ns = 50 M/s (Fig. 7a).
        let mut r = flow(CommPath::ClientSoc, Verb::Read, 64.0);
        r.address_range_bytes = 1536.0;
        let read_rate = 1.0 / demand(&p, &r).expect("demand").load[Resource::SocDram.index()];
        assert!(
            (read_rate / 50e6 - 1.0).abs() < 0.02 && read_rate > soc_rate,
            "{read_rate}"
        );
    }

    #[test]
    fn test_doorbell_batching_helps_soc_hurts_host() {
        let p = bf2();
        let rate = |who, b| requester_rate(&p, who, 1.0, 1.0, b).1;
        // Seed §3.3/Fig. 10b: SoC side 2.7–4.6x for batches 16–80.
        let soc16 = rate(Requester::Soc, 16.0) / rate(Requester::Soc, 1.0);
        let soc80 = rate(Requester::Soc, 80.0) / rate(Requester::Soc, 1.0);
        assert!(
            (2.5..3.0).contains(&soc16) && (4.3..4.9).contains(&soc80),
            "{soc16} {soc80}"
        );
        // Host side: −9%, −7%, −6% at batches 16, 32, 48.
        for (b, want) in [(16.0, 0.91), (32.0, 0.93), (48.0, 0.94)] {
            let ratio = rate(Requester::Host, b) / rate(Requester::Host, 1.0);
            assert!((ratio - want).abs() < 0.015, "batch {b}: {ratio}");
        }
        // Clients gain (Fig. 10b: 2–30%).
        let client = rate(Requester::Client, 16.0) / rate(Requester::Client, 1.0);
        assert!((1.02..1.30).contains(&client), "{client}");
    }

    #[test]
    fn test_large_reads_overflow_completion_buffer_only_with_small_mtu() {
        let p = bf2();
        let big = 16.0 * 1024.0 * 1024.0;
        // 16 MiB from SoC memory = 131072 completions of 128 B > 73728 tracked (9 MiB of them).
        let soc = demand(&p, &flow(CommPath::ClientSoc, Verb::Read, big)).expect("demand");
        assert_eq!(soc.overflow_tlps, 131072.0 - p.completion_buffer_entries);
        let at = |p: &OffpathParams, path, n: f64| demand(p, &flow(path, Verb::Read, n)).expect("demand").overflow_tlps;
        assert_eq!(
            at(&p, CommPath::ClientSoc, 9.0 * 1024.0 * 1024.0),
            0.0,
            "9 MiB: not collapsed yet"
        );
        assert!(at(&p, CommPath::ClientSoc, 9.0 * 1024.0 * 1024.0 + 128.0) > 0.0);
        // The threshold is a TLP count: it moves with the MTU. A SoC with 256-B completions collapses
        // at twice the payload; host READs (512 B) only at 4x, above Fig. 8's range.
        let mut wide = p.clone();
        wide.soc_mps_bytes = 256.0;
        assert_eq!(at(&wide, CommPath::ClientSoc, big), 0.0);
        assert!(at(&wide, CommPath::ClientSoc, 18.0 * 1024.0 * 1024.0 + 256.0) > 0.0);
        assert_eq!(at(&p, CommPath::ClientHost, 36.0 * 1024.0 * 1024.0), 0.0);
        assert!(at(&p, CommPath::ClientHost, 64.0 * 1024.0 * 1024.0) > 0.0);
        // Host memory: 512-B completions, 32768 < 73728: no head-of-line blocking (§3.2).
        assert_eq!(
            demand(&p, &flow(CommPath::ClientHost, Verb::Read, big))
                .expect("demand")
                .overflow_tlps,
            0.0
        );
        // WRITEs to the SoC do not wait for completions.
        assert_eq!(
            demand(&p, &flow(CommPath::ClientSoc, Verb::Write, big))
                .expect("demand")
                .overflow_tlps,
            0.0
        );
        // Host↔SoC relays both legs: WRITE overflows as well (§3.3, Advice #3).
        assert!(
            demand(&p, &flow(CommPath::HostSoc, Verb::Write, big))
                .expect("demand")
                .overflow_tlps
                > 0.0
        );
        assert_eq!(
            demand(&p, &flow(CommPath::ClientSoc, Verb::Read, 4096.0))
                .expect("demand")
                .overflow_tlps,
            0.0
        );
    }

    #[test]
    fn test_soc_paths_rejected_on_rnic() {
        let p = params("connectx6-rnic");
        let msg = demand(&p, &flow(CommPath::ClientSoc, Verb::Read, 64.0))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("client->soc") && msg.contains("plain RNIC"), "{msg}");
        assert!(demand(&p, &flow(CommPath::ClientHost, Verb::Read, 64.0)).is_ok());
    }
}

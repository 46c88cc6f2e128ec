//! The multi-worker path: the calling thread dispatches packets in batches
//! over bounded channels (back-pressure: a slow worker stalls the reader, it
//! never drops), workers return records over one channel that the calling
//! thread drains into the sink.
//!
//! The dispatcher parses each packet once (for the RSS hash) and hands the
//! parsed fields, not the frame bytes, to the worker: no copy of the frame,
//! no second parse. Batches are recycled through a per-worker free channel,
//! so the packet path allocates nothing in steady state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use crate::config::MeterConfig;
use crate::error::FlowError;
use nicbench_wire::ParsedFrame;

use crate::packet::{extract, PacketInfo};
use crate::record::FlowRecord;
use crate::run::{Dispatch, Next, Source, Totals};
use crate::sink::FlowSink;
use crate::stats::{Progress, WorkerStats};
use crate::table::FlowTable;

/// Batches in flight per worker (bounds memory and latency).
const BATCHES_PER_WORKER: usize = 8;
#[derive(Clone, Copy, Debug)]
struct BatchPacket {
    ts_ns: u64,
    caplen: u32,
    orig_len: u32,
    info: PacketInfo,
}

#[derive(Debug, Default)]
struct Batch {
    packets: Vec<BatchPacket>,
    /// Run timeouts at this time after the packets (live input without traffic).
    tick_ns: Option<u64>,
}

impl Batch {
    fn clear(&mut self) {
        self.packets.clear();
        self.tick_ns = None;
    }
}

struct WorkerLink {
    to_worker: Option<SyncSender<Batch>>,
    free: Receiver<Batch>,
    current: Batch,
}

fn worker_loop(
    mut table: FlowTable,
    batches: Receiver<Batch>,
    free: Sender<Batch>,
    records: Sender<Vec<FlowRecord>>,
) -> WorkerStats {
    let mut out = Vec::with_capacity(256);
    for mut batch in batches {
        for p in &batch.packets {
            table.process_info(p.ts_ns, p.caplen, p.orig_len, Some(&p.info), &mut out);
        }
        if let Some(now_ns) = batch.tick_ns {
            table.expire(now_ns, &mut out);
        }
        if !out.is_empty() {
            // The receiver lives until every worker is joined; an error means
            // the run is being torn down, and the records are counted anyway.
            let _ = records.send(std::mem::replace(&mut out, Vec::with_capacity(256)));
        }
        batch.clear();
        let _ = free.send(batch);
    }
    table.flush(&mut out);
    if !out.is_empty() {
        let _ = records.send(out);
    }
    table.stats()
}

fn drain(records: &Receiver<Vec<FlowRecord>>, sink: &mut dyn FlowSink, totals: &mut Totals) -> Result<(), FlowError> {
    while let Ok(batch) = records.try_recv() {
        totals.write(sink, &batch)?;
    }
    Ok(())
}

/// Sends worker `w`'s current batch and takes a free one (blocks while the
/// worker is `BATCHES_PER_WORKER` batches behind).
fn send(link: &mut WorkerLink) -> Result<(), FlowError> {
    let dead = || FlowError::Config("a flow meter worker thread died".into());
    let fresh = link.free.recv().map_err(|_| dead())?;
    let full = std::mem::replace(&mut link.current, fresh);
    link.to_worker.as_ref().ok_or_else(dead)?.send(full).map_err(|_| dead())
}

pub(crate) fn drive_workers<S: Source>(
    mut source: S,
    config: &MeterConfig,
    sink: &mut dyn FlowSink,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
    totals: &mut Totals,
) -> Result<(), FlowError> {
    let dispatch = Dispatch::new(config.workers)?;
    let per_worker = config.max_flows_per_worker();
    let batch_packets = config.batch_packets;
    let (record_tx, record_rx) = mpsc::channel::<Vec<FlowRecord>>();
    std::thread::scope(|scope| {
        let mut links = Vec::with_capacity(config.workers);
        let mut handles = Vec::with_capacity(config.workers);
        for w in 0..config.workers {
            let (batch_tx, batch_rx) = mpsc::sync_channel::<Batch>(BATCHES_PER_WORKER);
            let (free_tx, free_rx) = mpsc::channel::<Batch>();
            for _ in 0..BATCHES_PER_WORKER {
                let _ = free_tx.send(Batch::default());
            }
            let table = FlowTable::new(config, per_worker, w as u16);
            let records = record_tx.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("flowmeter-{w}"))
                    .spawn_scoped(scope, move || worker_loop(table, batch_rx, free_tx, records))
                    .map_err(|e| FlowError::io("spawning a flow meter worker", e))?,
            );
            links.push(WorkerLink {
                to_worker: Some(batch_tx),
                free: free_rx,
                current: Batch::default(),
            });
        }
        drop(record_tx);
        let mut non_ip = (0u64, 0u64);
        let mut scratch = ParsedFrame::default();
        let result = (|| -> Result<(), FlowError> {
            loop {
                if stop.load(Ordering::Relaxed) {
                    totals.stats.interrupted = true;
                    return Ok(());
                }
                match source.next()? {
                    Next::End => return Ok(()),
                    Next::BadInput(message) => {
                        totals.stats.input_error = Some(message);
                        return Ok(());
                    }
                    Next::Idle(now_ns) => {
                        for link in links.iter_mut() {
                            link.current.tick_ns = Some(now_ns);
                            send(link)?;
                        }
                    }
                    Next::Frame(f) => {
                        totals.count(&f);
                        match f.l2.and_then(|l2| extract(f.data, l2, &mut scratch)) {
                            None => {
                                non_ip.0 += 1;
                                non_ip.1 += f.data.len() as u64;
                            }
                            Some(info) => {
                                let link = &mut links[dispatch.worker_of_info(&info)];
                                let caplen = f.data.len() as u32;
                                link.current.packets.push(BatchPacket {
                                    ts_ns: f.ts_ns,
                                    caplen,
                                    orig_len: f.orig_len,
                                    info,
                                });
                                if link.current.packets.len() >= batch_packets {
                                    send(link)?;
                                    drain(&record_rx, sink, totals)?;
                                }
                            }
                        }
                        if totals.stats.packets % 4096 != 0 {
                            continue;
                        }
                    }
                }
                drain(&record_rx, sink, totals)?;
                totals.progress(source.input_bytes_read(), false, progress);
            }
        })();
        // Hand over what is pending, then close the channels: workers flush and exit.
        let mut result = result;
        for link in links.iter_mut() {
            if !link.current.packets.is_empty() {
                if let Err(e) = send(link) {
                    result = result.and(Err(e));
                }
            }
            link.to_worker = None;
        }
        // Blocks until every worker has sent its flush and dropped its sender.
        for batch in record_rx.iter() {
            if result.is_ok() {
                if let Err(e) = totals.write(sink, &batch) {
                    result = Err(e);
                }
            }
        }
        let mut worker_stats = Vec::with_capacity(handles.len());
        for handle in handles {
            match handle.join() {
                Ok(stats) => worker_stats.push(stats),
                Err(_) => result = result.and(Err(FlowError::Config("a flow meter worker thread panicked".into()))),
            }
        }
        totals.stats.finish(worker_stats, non_ip);
        result
    })
}

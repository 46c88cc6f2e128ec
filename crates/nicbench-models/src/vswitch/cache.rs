//! The datapath's megaflow cache, the upcalls that fill it and the revalidators that empty it
//! (ofproto/ofproto-dpif-upcall.c), in simulated time.
//!
//! - A packet that matches an installed megaflow (`key & mask == value`) counts on it.
//! - A miss is an upcall, queued to one of `n-handler-threads` handler threads (the kernel
//!   datapath's per-CPU dispatch: a flow's packets go to one handler, here by the key's hash)
//!   (`run.rs`). A handler takes `upcall_us` per upcall, one after the other; the megaflow is
//!   installed when its upcall finishes, unless the datapath then holds `flow_limit` flows
//!   (`should_install_flow`: "upcall: datapath flow limit reached"; the packet is handled
//!   without a flow). Packets of the flow arriving meanwhile miss too: duplicate upcalls
//!   (`handler_duplicate_upcall`), handled and executed, installing nothing. A handler's queue
//!   (its netlink socket's receive buffer) holds `upcall_queue` upcalls; a miss beyond that is
//!   lost (`dpctl/show` "lost") and its packet dropped.
//! - Every `revalidator_period_ms` (OVS `other_config:max-revalidator`, 500 ms) the
//!   revalidators dump all flows. A flow idle longer than `max_idle` is deleted; `max_idle` is
//!   `max_idle_ms` (OVS `max-idle`, 10 s) but 100 ms when the datapath holds more than
//!   `flow_limit` flows, and with more than twice `flow_limit` every flow is deleted
//!   (`revalidate`). After the dump, `udpif_revalidator` adapts the limit to the dump's
//!   duration [ms]: > 2000 → limit / (duration / 1000); > 1300 → limit × 3/4; < 1000 and the
//!   limit below flows × 1000 / duration → limit + 1000; then clamped to [1000, configured].
//!   The dump's duration is modelled as flows × `revalidate_flow_us` / threads (OVS measures
//!   it on the wall clock), stretched when the handlers and the revalidators want more cores
//!   than the host gives the datapath (`host_datapath_cores`, shared fairly): × (busy handler
//!   cores over the last period + revalidator threads) / cores when that is above 1. So a high
//!   set-up load slows the dumps and, through the formula above, lowers the flow limit.

use std::collections::HashMap;

use nicbench_rules::openflow::DpFlow;
use nicbench_sim::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use super::key::Fields;

/// The revalidator and flow-limit settings; defaults are OVS 3.1's (vswitch.xml).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// `other_config:max-idle` \[ms\] (default 10000).
    pub max_idle_ms: u64,
    /// `other_config:flow-limit` \[flows\] (default 200000).
    pub flow_limit: u64,
    /// `other_config:max-revalidator` \[ms\] (default 500): the revalidators' period.
    pub revalidator_period_ms: u64,
    /// `other_config:n-revalidator-threads` (OVS default: cores / 4 + 1; here 1 unless set).
    pub revalidator_threads: u32,
    /// `other_config:n-handler-threads`: the threads that handle upcalls (OVS default: one per
    /// core; here the host profile's `host_datapath_cores` unless set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handler_threads: Option<u32>,
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig {
            max_idle_ms: 10_000,
            flow_limit: 200_000,
            revalidator_period_ms: 500,
            revalidator_threads: 1,
            handler_threads: None,
        }
    }
}

/// OVS never lowers the dynamic flow limit below this (`MAX(flow_limit, 1000)`).
pub const MIN_FLOW_LIMIT: u64 = 1000;
/// `max_idle` while the datapath holds more than the flow limit \[ms\].
pub const OVERFLOW_MAX_IDLE_MS: u64 = 100;

/// One installed megaflow.
#[derive(Clone, Debug)]
pub struct Entry {
    pub mask: Fields,
    pub value: Fields,
    pub flow: DpFlow,
    pub created: SimTime,
    pub last_used: SimTime,
    pub offloaded: bool,
    pub dp: &'static str,
    pub reason: Option<String>,
    pub alive: bool,
}

/// What the revalidators did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RevalidatorStats {
    pub dumps: u64,
    pub evicted_idle: u64,
    pub evicted_overflow: u64,
    /// Sum of the modelled dump durations \[ms\].
    pub dump_ms_total: f64,
    /// The longest dump \[ms\].
    #[serde(default)]
    pub dump_ms_max: f64,
    pub flow_limit_min: u64,
    pub flow_limit_final: u64,
    pub max_flows: u64,
}

/// The megaflow cache.
pub struct MegaflowCache {
    config: CacheConfig,
    revalidate_flow_us: f64,
    /// Masks in first-use order, each with its masked values.
    by_mask: Vec<(Fields, HashMap<Fields, usize>)>,
    pub entries: Vec<Entry>,
    n_alive: u64,
    n_offloaded: u64,
    pub flow_limit: u64,
    next_dump: SimTime,
    /// The host's cores for the datapath's threads (handlers and revalidators share them).
    cores: f64,
    pub stats: RevalidatorStats,
}

impl MegaflowCache {
    pub fn new(config: &CacheConfig, revalidate_flow_us: f64) -> MegaflowCache {
        MegaflowCache {
            config: config.clone(),
            revalidate_flow_us,
            by_mask: Vec::new(),
            entries: Vec::new(),
            n_alive: 0,
            n_offloaded: 0,
            flow_limit: config.flow_limit,
            next_dump: SimTime::ZERO + SimDuration::from_ns(config.revalidator_period_ms * 1_000_000),
            cores: f64::INFINITY,
            stats: RevalidatorStats {
                flow_limit_min: config.flow_limit,
                flow_limit_final: config.flow_limit,
                ..Default::default()
            },
        }
    }

    /// The cores the handlers and revalidators share (default: no limit, dumps never stretched).
    pub fn with_cores(mut self, cores: f64) -> MegaflowCache {
        self.cores = cores;
        self
    }

    pub fn n_flows(&self) -> u64 {
        self.n_alive
    }

    /// Installed flows that are offloaded.
    pub fn n_offloaded(&self) -> u64 {
        self.n_offloaded
    }

    /// The installed megaflow `key` matches, if any.
    pub fn lookup(&self, key: &Fields) -> Option<usize> {
        self.by_mask
            .iter()
            .find_map(|(mask, values)| values.get(&key.and(mask)).copied())
    }

    /// True when a new flow may be installed (`should_install_flow`).
    pub fn may_install(&self) -> bool {
        self.n_alive < self.flow_limit
    }

    pub fn install(&mut self, entry: Entry) -> usize {
        let idx = self.entries.len();
        let pos = self
            .by_mask
            .iter()
            .position(|(m, _)| *m == entry.mask)
            .unwrap_or_else(|| {
                self.by_mask.push((entry.mask, HashMap::new()));
                self.by_mask.len() - 1
            });
        self.by_mask[pos].1.insert(entry.value, idx);
        self.n_offloaded += u64::from(entry.offloaded);
        self.entries.push(entry);
        self.n_alive += 1;
        self.stats.max_flows = self.stats.max_flows.max(self.n_alive);
        idx
    }

    fn remove(&mut self, idx: usize) {
        let e = &mut self.entries[idx];
        e.alive = false;
        self.n_offloaded -= u64::from(e.offloaded);
        if let Some((_, values)) = self.by_mask.iter_mut().find(|(m, _)| *m == e.mask) {
            values.remove(&e.value);
        }
        self.n_alive -= 1;
    }

    /// Runs every revalidator dump due up to `now`, with idle handlers.
    pub fn revalidate_until(&mut self, now: SimTime) {
        while self.next_dump <= now {
            self.dump_next(0.0);
        }
    }

    /// When the next dump runs.
    pub fn next_dump(&self) -> SimTime {
        self.next_dump
    }

    /// The revalidators' period.
    pub fn period(&self) -> SimDuration {
        SimDuration::from_ns(self.config.revalidator_period_ms.max(1) * 1_000_000)
    }

    /// Runs the next dump, the handlers having kept `handler_cores` cores busy (on average) over
    /// the period before it.
    pub fn dump_next(&mut self, handler_cores: f64) {
        let at = self.next_dump;
        self.dump(at, handler_cores);
        self.next_dump = at + self.period();
    }

    fn dump(&mut self, now: SimTime, handler_cores: f64) {
        let n = self.n_alive;
        let max_idle_ms = if n > self.flow_limit {
            OVERFLOW_MAX_IDLE_MS
        } else {
            self.config.max_idle_ms
        };
        let kill_all = n > self.flow_limit.saturating_mul(2);
        let max_idle = SimDuration::from_ns(max_idle_ms * 1_000_000);
        let overflow = n > self.flow_limit;
        for idx in 0..self.entries.len() {
            let e = &self.entries[idx];
            if e.alive && (kill_all || now.since(e.last_used) > max_idle) {
                if overflow {
                    self.stats.evicted_overflow += 1;
                } else {
                    self.stats.evicted_idle += 1;
                }
                self.remove(idx);
            }
        }
        let threads = f64::from(self.config.revalidator_threads.max(1));
        let stretch = ((handler_cores + threads) / self.cores).max(1.0);
        let duration_ms = (n as f64 * self.revalidate_flow_us / threads / 1000.0 * stretch).max(1.0);
        self.stats.dumps += 1;
        self.stats.dump_ms_total += duration_ms;
        self.stats.dump_ms_max = self.stats.dump_ms_max.max(duration_ms);
        self.flow_limit = next_flow_limit(self.flow_limit, n, duration_ms, self.config.flow_limit);
        self.stats.flow_limit_min = self.stats.flow_limit_min.min(self.flow_limit);
        self.stats.flow_limit_final = self.flow_limit;
    }
}

/// `udpif_revalidator`'s adaptation of the flow limit to a dump of `n_flows` that took
/// `duration_ms` (at least 1 ms).
pub fn next_flow_limit(limit: u64, n_flows: u64, duration_ms: f64, configured: u64) -> u64 {
    let d = duration_ms.max(1.0).floor() as u64;
    let next = if d > 2000 {
        limit / (d / 1000)
    } else if d > 1300 {
        limit * 3 / 4
    } else if d < 1000 && limit < n_flows * 1000 / d {
        limit + 1000
    } else {
        limit
    };
    next.max(MIN_FLOW_LIMIT).min(configured)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn entry(v: u128, at: SimTime) -> Entry {
        let mut mask = Fields::default();
        mask.0[0] = u128::MAX;
        let mut value = Fields::default();
        value.0[0] = v;
        Entry {
            mask,
            value,
            flow: DpFlow {
                keys: vec![],
                actions: vec![],
                ..DpFlow::default()
            },
            created: at,
            last_used: at,
            offloaded: false,
            dp: "ovs",
            reason: None,
            alive: true,
        }
    }

    fn ms(v: u64) -> SimTime {
        SimTime::from_ns(v * 1_000_000)
    }

    #[test]
    fn test_flow_limit_adaptation_by_hand() {
        assert_eq!(
            next_flow_limit(200_000, 50_000, 3000.0, 200_000),
            66_666,
            "3 s dump: limit / 3"
        );
        assert_eq!(next_flow_limit(200_000, 50_000, 1500.0, 200_000), 150_000, "1.5 s: 3/4");
        assert_eq!(
            next_flow_limit(100_000, 50_000, 500.0, 200_000),
            100_000,
            "fast dump, limit above flows x 2"
        );
        assert_eq!(
            next_flow_limit(50_000, 50_000, 500.0, 200_000),
            51_000,
            "fast dump, limit below flows x 2: +1000"
        );
        assert_eq!(
            next_flow_limit(1_200, 9_000, 9000.0, 200_000),
            1_000,
            "never below 1000"
        );
        assert_eq!(
            next_flow_limit(199_500, 190_000, 10.0, 200_000),
            200_000,
            "never above the configured limit"
        );
    }

    #[test]
    fn test_idle_flows_expire_at_the_first_dump_after_max_idle() {
        let cfg = CacheConfig::default();
        let mut c = MegaflowCache::new(&cfg, 0.0);
        c.install(entry(1, ms(0)));
        let hot = c.install(entry(2, ms(0)));
        let mut k = Fields::default();
        k.0[0] = 2;
        assert_eq!(c.lookup(&k), Some(hot));
        // Flow 2 is used at 9.9 s; dumps run every 500 ms.
        c.revalidate_until(ms(9_900));
        c.entries[hot].last_used = ms(9_900);
        c.revalidate_until(ms(10_000));
        assert_eq!(c.n_flows(), 2, "idle exactly 10 s is not more than max-idle");
        c.revalidate_until(ms(10_500));
        assert_eq!(c.n_flows(), 1, "flow 1 idle 10.5 s > 10 s at the 10.5 s dump");
        assert_eq!(c.lookup(&k), Some(hot));
        c.revalidate_until(ms(19_500));
        assert_eq!(c.n_flows(), 1, "flow 2 idle 9.6 s at the 19.5 s dump");
        c.revalidate_until(ms(20_000));
        assert_eq!(c.n_flows(), 0, "flow 2 idle 10.1 s at the 20 s dump");
        assert_eq!(c.stats.evicted_idle, 2);
        assert_eq!(c.stats.dumps, 40);
    }

    #[test]
    fn test_over_the_limit_flows_idle_100_ms_go_and_new_ones_are_not_installed() {
        let cfg = CacheConfig {
            flow_limit: 1000,
            ..CacheConfig::default()
        };
        let mut c = MegaflowCache::new(&cfg, 0.0);
        for v in 0..1000 {
            c.install(entry(v, ms(0)));
        }
        assert!(!c.may_install(), "1000 flows at a limit of 1000");
        // Forced over the limit (as a burst of handlers could): the dump uses 100 ms max-idle.
        c.install(entry(5000, ms(0)));
        c.revalidate_until(ms(500));
        assert_eq!(c.n_flows(), 0);
        assert_eq!(c.stats.evicted_overflow, 1001);
    }
}

#[cfg(test)]
mod load_tests {
    use super::tests::entry;
    use super::*;

    /// 10000 flows, 20 µs per flow per dump, one revalidator: a 200 ms dump, the limit stays. With
    /// the handlers keeping 63 of the host's 8 cores' worth busy, the dump shares the cores with
    /// them: × (63 + 1) / 8 = 1.6 s, and the limit drops by a quarter.
    #[test]
    fn test_busy_handlers_stretch_the_dump_and_lower_the_flow_limit() {
        let run = |handler_cores: f64| {
            let mut c = MegaflowCache::new(&CacheConfig::default(), 20.0).with_cores(8.0);
            for v in 0..10_000 {
                // Created at 0, last used at 400 ms: idle less than max_idle at the dumps.
                c.install(Entry {
                    last_used: SimTime::from_ns(400_000_000),
                    ..entry(v, SimTime::ZERO)
                });
            }
            c.dump_next(handler_cores);
            c.stats
        };
        let idle = run(0.0);
        assert_eq!((idle.dump_ms_max, idle.flow_limit_final), (200.0, 200_000));
        let busy = run(63.0);
        assert_eq!((busy.dump_ms_max, busy.flow_limit_final), (1600.0, 150_000));
        assert_eq!(run(7.0).dump_ms_max, 200.0, "7 + 1 threads fit 8 cores");
    }
}

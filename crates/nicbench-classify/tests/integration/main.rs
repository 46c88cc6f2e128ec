//! Integration tests of nicbench-classify, one file per behaviour.

mod agree_with_oracle;
mod api;
mod classbench;
mod concurrency;
mod oracle;
mod tuple_fast_path;
mod vs_rte_acl;

//! Integration tests of nicbench-trace, one file per behaviour.

mod against_generator;

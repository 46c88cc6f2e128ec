//! nicbench-flowmeter: an Argus-style bidirectional flow meter (work in progress).

"""The robustness suite: every command on bad input answers with exit code 2 and ONE line on
stderr, `nicbench: error: <what, where, what is allowed>` — never a traceback, a Rust panic, a
hang or a blow-up — within a few seconds (issue 17).

One table, `CASES`: (id, command line, a fragment the error line must contain). Command lines
name inputs by placeholder (`{empty}`, `{selfjump}` …); the fixture `inputs` writes them once per
run. Every bug found later adds a row. Each case runs in a real process of its own (exit code,
stdout and stderr at the descriptor level, a kill at the time limit), forked from a server that
imported the CLI once (`cli_process`): several at a time, the whole table takes seconds instead of
an interpreter's start-up per case. The tests below the table run the installed entry point
(`python -m nicbench.cli`) as a user does.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cli_process import run_forked, run_forked_interrupted, run_forked_many

# Wall-clock bound of one case [s]: a bad input is refused before any real work, so well under
# this even on a loaded 2-core CI machine (also for the entry point's own start-up, in the tests that
# run it as a subprocess).
CASE_TIMEOUT_S = 20.0

GOOD_RULE = "flow create 0 ingress pattern eth / ipv4 / udp dst is 53 / end actions drop / end\n"

# (id, arguments, fragment of the one error line). Placeholders in {} are files from `inputs`.
CASES: list[tuple[str, list[str], str]] = [
    # --- caps where a request cannot fit
    (
        "rules gen count 1e12",
        ["rules", "gen", "--count", "1e12", "-o", "{out}/x.flow"],
        "--count: 1e12 is too large: at most 4,194,304",
    ),
    (
        "rules gen count nan",
        ["rules", "gen", "--count", "nan", "-o", "{out}/x.flow"],
        "--count: expected a count such as 10000",
    ),
    ("rules gen to tc", ["rules", "gen", "--to", "tc", "-o", "{out}/x.tc"], "tc flower cannot express"),
    ("simulate bin 1ns", ["simulate", "--bin", "1ns", "--duration", "1s"], "at most 1,000,000"),
    ("simulate duration 1e9s", ["simulate", "--duration", "1e9s"], "at most 3600 s"),
    (
        "simulate install period without a rate",
        ["simulate", "--install-batch", "10", "--install-period", "1ms", "--duration", "1ms"],
        "applies only with --install-rate",
    ),
    (
        "simulate install period making huge bursts",
        ["simulate", "--install-rate", "10k/s", "--install-period", "1e12s", "--duration", "1ms"],
        "at most 4,194,304",
    ),
    (
        "simulate unknown generator setup",
        ["simulate", "--generator", "pktgen", "--duration", "1ms"],
        "'play', 'timed_replay'",
    ),
    (
        "simulate duration 1e400s",
        ["simulate", "--duration", "1e400s"],
        "expected a duration such as 500ms or 20us, found '1e400s'",
    ),
    (
        "simulate rate 1e30Gbps",
        ["simulate", "--gen", "flows=10,size=1500,rate=1e30Gbps", "--duration", "1ms"],
        "at most",
    ),
    (
        "simulate rate 1e-30Gbps",
        ["simulate", "--gen", "rate=1e-30Gbps", "--duration", "1ms"],
        "less than one packet per second",
    ),
    ("simulate many packets", ["simulate", "--gen", "size=64,rate=100Gbps", "--duration", "3000s"], "packets: at most"),
    (
        "simulate generated 1e12",
        ["simulate", "--generated", "1e12", "--duration", "1ms"],
        "'--generated': expected a count such as 10000, 10k or 1M ≤ 4,194,304, found '1e12'",
    ),
    (
        "simulate install batch 1e15",
        ["simulate", "--install-batch", "1e15", "--duration", "1ms"],
        "'--install-batch': expected a count such as 10000, 10k or 1M or 'none' from 1 to 4,194,304",
    ),
    (
        "simulate install rate beyond the cap",
        ["simulate", "--install-rate", "1e9/s", "--duration", "1s"],
        "rule operations: at most 4,194,304 per run",
    ),
    (
        "simulate queue map core too high",
        ["simulate", "--cores", "2", "--queues", "2", "--queue-map", "0:0,1:2", "--duration", "1ms"],
        "--queue-map: queue 1 on core 2, but --cores is 2",
    ),
    (
        "simulate queue map queue unmapped",
        ["simulate", "--cores", "2", "--queues", "4", "--queue-map", "0:0,1:1", "--duration", "1ms"],
        "--queue-map: queue 2 of the port's 4",
    ),
    (
        "simulate queue map bad pair",
        ["simulate", "--cores", "2", "--queue-map", "0-1", "--duration", "1ms"],
        "expected QUEUE:CORE pairs",
    ),
    (
        "simulate queue map rule queue unmapped",
        ["simulate", "--rules", "{queue_rules}", "--cores", "2", "--queue-map", "0:1", "--duration", "1ms"],
        "queue 1, which a rule in group 0",
    ),
    ("simulate warmup past end", ["simulate", "--duration", "1ms", "--warmup", "2ms"], "shorter than the duration"),
    # --- the validator checks what the tools check (issue 38): refused by every loader, `rules check` too
    ("rules check rss key 4 bytes", ["rules", "check", "{rss_key4}"], "rss_key4.flow:1:1: rss key of 4 bytes"),
    ("classify rss key 4 bytes", ["classify", "--rules", "{rss_key4}", "--pcap", "{good_pcap}"], "rss key of 4"),
    ("rules check rss simple_xor", ["rules", "check", "{rss_xor}"], "rss func simple_xor is not modelled"),
    ("rules check two fates", ["rules", "check", "{two_fates}"], "2 fate actions (drop, queue index 1)"),
    ("simulate two fates", ["simulate", "--rules", "{two_fates}", "--duration", "1ms"], "2 fate actions"),
    ("rules openflow goto back", ["rules", "openflow", "{of_goto_back}"], "OFPBIC_BAD_TABLE_ID"),
    (
        "vswitch goto back",
        ["vswitch", "megaflows", "--openflow", "{of_goto_back}", "--pcap", "{good_pcap}"],
        "goto_table:1 in a flow of table 2",
    ),
    ("rules openflow port name 1 MB", ["rules", "openflow", "{of_long_port}"], "at most 15"),
    # --- result stores validated when opened
    ("results export corrupt metadata", ["results", "export", "{corrupt_results}"], "corrupt results metadata"),
    (
        "report with corrupt metadata",
        ["report", "{noop_a_results}", "--with", "{corrupt_results}", "-o", "{out}/r.html"],
        "experiment.json: corrupt results metadata at line 1",
    ),
    ("report list metadata", ["report", "{list_meta_results}", "-o", "{out}/r.html"], "a JSON list, not the object"),
    # --- measurements range-checked by metric
    (
        "calibrate negative throughput",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_negative}", "-o", "{out}/m.toml"],
        "rx_gbps = -80 Gbps: a Gbps measurement cannot be negative",
    ),
    # --- caps named, in the user's terms
    ("gen duration 1e20s", ["gen", "--duration", "1e20s", "-o", "{out}/g.pcap"], "at most 4,294,967,295 s"),
    ("pvp megaflows empty list", ["pvp", "--megaflows", "{mf_list}"], "mf_list.json: [] is not of type 'object'"),
    ("pvp megaflows negative", ["pvp", "--megaflows", "{mf_negative}"], "masks[0].megaflows: -5 is less than"),
    ("paths empty flow", ["paths", "--flow", "client->soc READ 64B;;"], "flow 2 of 2"),
    ("simulate queue map names the given queues", ["simulate", "--queues", "2", "--queue-map", "5:0"], "gives queue 5"),
    ("pvp frame 9216", ["pvp", "--size", "9216"], "from 64B to 9,018B"),
    ("flowhost frame 10000", ["flowhost", "--size", "10000"], "from 64B to 9,018B"),
    ("check name 100k chars", ["check", "{long_name_spec}"], "at most 200"),
    ("check unknown study spec", ["check", "pam21/nope"], "pam21/nope: no such file, nor a packaged spec"),
    ("pcap info pcapng major 2", ["pcap", "info", "{pcapng_v2}"], "pcapng major version 2"),
    (
        "reproduce study toml nested 2000 deep",
        ["reproduce", "deep", "--studies", "{deep_studies}"],
        "study.toml: not a study file: nested too deeply",
    ),
    # --- an output error names the file asked for, never its temporary name
    (
        "flows parquet into a missing folder",
        ["flows", "{good_pcap}", "--format", "parquet", "-o", "{out}/no/such/p.parquet"],
        "p.parquet: cannot write it: the folder",
    ),
    ("flows csv into proc", ["flows", "{good_pcap}", "-o", "/proc/p.csv"], "/proc/p.csv: cannot create"),
    (
        "simulate gen flows 1e20",
        ["simulate", "--gen", "flows=1e20"],
        "--gen flows: 1e20 is too large: at most 16,777,216",
    ),
    ("simulate gen zipf nan", ["simulate", "--gen", "zipf=nan"], "zipf"),
    ("simulate gen order bad", ["simulate", "--gen", "order=sorted"], "expected random or round-robin"),
    (
        "simulate gen order and zipf",
        ["simulate", "--gen", "order=round-robin,zipf=1.1"],
        "either take turns or are drawn by Zipf",
    ),
    (
        "gen rate 1e30Gbps",
        ["gen", "--rate", "1e30Gbps", "--packets", "10", "-o", "{out}/g.pcap"],
        "more than one frame per nanosecond",
    ),
    ("gen rate 1e-30Gbps", ["gen", "--rate", "1e-30Gbps", "--packets", "100", "-o", "{out}/g.pcap"], "at least 1 pps"),
    ("gen rate inf", ["gen", "--rate", "1e400Gbps", "-o", "{out}/g.pcap"], "finite"),
    ("gen rate negative", ["gen", "--rate", "-5Gbps", "-o", "{out}/g.pcap"], "rate"),
    (
        "gen flows 1e20",
        ["gen", "--flows", "1e20", "-o", "{out}/g.pcap"],
        "--flows: 1e20 is too large: at most 16,777,216",
    ),
    ("gen flows 0", ["gen", "--flows", "0", "-o", "{out}/g.pcap"], "flows"),
    ("gen zipf nan", ["gen", "--zipf", "nan", "-o", "{out}/g.pcap"], "not a finite number"),
    ("flows idle 1e20s", ["flows", "{good_pcap}", "--idle", "1e20s"], "at most 1e+09 s"),
    ("flows active 0", ["flows", "{good_pcap}", "--active", "0"], "--active 0: the status interval must be positive"),
    ("gen zipf inf", ["gen", "--zipf", "inf", "-o", "{out}/g.pcap"], "not a finite number"),
    (
        "gen for-rules with flows",
        ["gen", "--for-rules", "{good_rules}", "--flows", "10", "-o", "{out}/g.pcap"],
        "--flows: with --for-rules the flows and their headers come from the rules",
    ),
    ("gen hit-share without rules", ["gen", "--hit-share", "0.5", "-o", "{out}/g.pcap"], "--for-rules FILE only"),
    (
        "gen hit-share 0",
        ["gen", "--for-rules", "{good_rules}", "--hit-share", "0", "-o", "{out}/g.pcap"],
        "--hit-share",
    ),
    (
        "gen hit-share above 1",
        ["gen", "--for-rules", "{good_rules}", "--hit-share", "1.5", "-o", "{out}/g.pcap"],
        "--hit-share",
    ),
    (
        "gen for-rules fewer packets than rules",
        ["gen", "--for-rules", "{two_rules}", "--packets", "1", "-o", "{out}/g.pcap"],
        "the stream holds 1 packets, fewer than its 2 flows",
    ),
    (
        "gen for-rules no rule can be met",
        ["gen", "--for-rules", "{sctp_rules}", "-o", "{out}/g.pcap"],
        "no frame the generator can write meets any of its 1 rules",
    ),
    (
        "gen for-rules frame larger than size",
        ["gen", "--for-rules", "{vlan6_rules}", "--size", "64", "--packets", "10", "-o", "{out}/g.pcap"],
        "the frame that meets this rule",
    ),
    ("gen duration 1e9s", ["gen", "--duration", "1e9s", "-o", "{out}/g.pcap"], "packets: at most"),
    ("gen packets nan", ["gen", "--packets", "nan", "-o", "{out}/g.pcap"], "--packets: expected a count such as 10000"),
    ("classify top -1", ["classify", "--rules", "{good_rules}", "--pcap", "{good_pcap}", "--top", "-1"], "--top"),
    (
        "paths threads huge",
        ["paths", "--flow", "client->soc READ 4KiB threads 99999999999999999999"],
        "from 1 to 4,096",
    ),
    ("paths machines 0", ["paths", "--flow", "client->soc READ 4KiB machines 0"], "machines"),
    (
        "pvp flows 1e20",
        ["pvp", "--flows", "1e20"],
        "'--flows': expected a count such as 10000, 10k or 1M from 1 to 268,435,456",
    ),
    ("pvp gbps nan", ["pvp", "--gbps", "nan"], "'--gbps': expected a number such as 0.5 or 'line'"),
    ("flowhost cores 0", ["flowhost", "--cores", "0"], "--cores"),
    ("flowhost zipf nan", ["flowhost", "--zipf", "nan"], "--zipf"),
    (
        "flowhost flows 1e20",
        ["flowhost", "--flows", "1e20"],
        "'--flows': expected a count such as 10000, 10k or 1M from 1 to 16,777,216",
    ),
    ("flowhost duration 1e9s", ["flowhost", "--duration", "1e9s"], "at most 3600 s"),
    ("simulate set nan", ["simulate", "--set", "x=nan"], "--set x: expected a finite number"),
    ("simulate install rate inf", ["simulate", "--install-rate", "1e400/s"], "--install-rate"),
    ("rss queues 0", ["rss", "{good_pcap}", "--queues", "0"], "--queues"),
    ("rss queues above any reta", ["rss", "{good_pcap}", "--queues", "5000"], "5000 (allowed: 1 to 512)"),
    ("rss reta 1e20", ["rss", "{good_pcap}", "--queues", "4", "--reta-size", "1e20"], "--reta-size"),
    # --- pcaps: empty, truncated, wrong type, wrong link type, directory, missing
    ("pcap info empty", ["pcap", "info", "{empty}"], "empty file"),
    ("pcap info text", ["pcap", "info", "{text}"], "not a pcap/pcapng file"),
    ("pcap info truncated header", ["pcap", "info", "{truncated_header}"], "truncated file header"),
    ("pcap info truncated record", ["pcap", "info", "{truncated_record}"], "truncated packet data"),
    ("pcap info wifi", ["pcap", "info", "{wifi}"], "link type IEEE802_11 (105) is not supported"),
    ("pcap info directory", ["pcap", "info", "{out}"], "directory"),
    ("pcap info missing", ["pcap", "info", "{out}/nope.pcap"], "nope.pcap"),
    ("rss empty", ["rss", "{empty}", "--queues", "4"], "empty file"),
    ("rss wifi", ["rss", "{wifi}", "--queues", "4"], "link type IEEE802_11 (105)"),
    ("flows wifi", ["flows", "{wifi}"], "link type IEEE802_11 (105)"),
    ("flows ipfix empty", ["flows", "{good_pcap}", "--ipfix", ""], "--ipfix '': expected HOST:PORT"),
    ("flows ipfix port 0", ["flows", "{good_pcap}", "--ipfix", "127.0.0.1:0"], "the port 1 to 65535"),
    ("flows text", ["flows", "{text}"], "not a pcap/pcapng file"),
    ("flows truncated", ["flows", "{truncated_record}"], "packet 1 at byte offset 104: truncated packet data"),
    ("flows directory", ["flows", "{out}"], "directory"),
    ("classify wifi", ["classify", "--rules", "{good_rules}", "--pcap", "{wifi}"], "link type IEEE802_11 (105)"),
    ("classify truncated", ["classify", "--rules", "{good_rules}", "--pcap", "{truncated_header}"], "truncated"),
    ("simulate trace wifi", ["simulate", "--trace", "{wifi}", "--duration", "1ms"], "link type IEEE802_11 (105)"),
    ("simulate trace empty", ["simulate", "--trace", "{empty}", "--duration", "1ms"], "empty file"),
    ("rules check of a capture", ["rules", "check", "{good_pcap}"], "not a text file (a rule file is UTF-8 text"),
    (
        "simulate nic a capture",
        ["simulate", "--nic", "{good_pcap}", "--duration", "1ms"],
        "not a text file (a profile is a TOML file)",
    ),
    (
        "vswitch openflow a capture",
        ["vswitch", "megaflows", "--openflow", "{good_pcap}", "--pcap", "{good_pcap}"],
        "not a text file (OpenFlow rules are text",
    ),
    (
        "simulate gen rate above the line rate",
        ["simulate", "--gen", "rate=200Gbps", "--duration", "1ms"],
        "--gen rate: 200 Gb/s is above the port's line rate of 100 Gb/s",
    ),
    (
        "flowhost rate above the line rate",
        ["flowhost", "--rate", "200Gbps", "--duration", "1ms"],
        "--rate 200Gbps: above the line rate of napatech-nt100 (100 Gbps on the wire)",
    ),
    ("vswitch cooked trace", ["vswitch", "--openflow", "{of_rules}", "--trace", "{sll2}"], "needs Ethernet frames"),
    (
        "vswitch vxlan bad remote_ip",
        [
            "vswitch",
            "megaflows",
            "--openflow",
            "{of_rules}",
            "--pcap",
            "{good_pcap}",
            "--port",
            "vx=vxlan,remote_ip=1.2.3,local_ip=10.0.0.1,underlay=p0",
        ],
        "remote_ip: '1.2.3' is not an IPv4 address",
    ),
    (
        "vswitch port type gre",
        [
            "vswitch",
            "megaflows",
            "--openflow",
            "{of_rules}",
            "--pcap",
            "{good_pcap}",
            "--port",
            "gr=gre,remote_ip=1.2.3.4",
        ],
        "port type 'gre' is not modelled (allowed: vxlan)",
    ),
    (
        "vswitch vxlan no underlay",
        [
            "vswitch",
            "megaflows",
            "--openflow",
            "{of_rules}",
            "--pcap",
            "{good_pcap}",
            "--port",
            "vx=vxlan,remote_ip=1.2.3.4,local_ip=10.0.0.1",
        ],
        "underlay missing",
    ),
    (
        "vswitch vxlan key too big",
        [
            "vswitch",
            "megaflows",
            "--openflow",
            "{of_rules}",
            "--pcap",
            "{good_pcap}",
            "--port",
            "vx=vxlan,remote_ip=1.2.3.4,local_ip=10.0.0.1,underlay=p0,key=16777216",
        ],
        "is not 'flow' or a VNI from 0 to 16777215",
    ),
    (
        "vswitch vxlan bad mac",
        [
            "vswitch",
            "megaflows",
            "--openflow",
            "{of_rules}",
            "--pcap",
            "{good_pcap}",
            "--port",
            "vx=vxlan,remote_ip=1.2.3.4,local_ip=10.0.0.1,underlay=p0,remote_mac=zz",
        ],
        "remote_mac: 'zz' is not a MAC address",
    ),
    (
        "vswitch vxlan unknown option",
        [
            "vswitch",
            "megaflows",
            "--openflow",
            "{of_rules}",
            "--pcap",
            "{good_pcap}",
            "--port",
            "vx=vxlan,remote_ip=1.2.3.4,local_ip=10.0.0.1,underlay=p0,ttl=5",
        ],
        "'ttl=5' is not KEY=VALUE with KEY one of",
    ),
    # --- rule files: loops, reversed ranges, BOM + bad token, long tokens, conversion
    # --- experiment runs: timeout and Dask scheduler (issue 19)
    ("run timeout nan", ["run", "{noop_spec}", "--results", "{out}/r", "--timeout", "nan"], "--timeout"),
    ("run timeout zero", ["run", "{noop_spec}", "--results", "{out}/r", "--timeout", "0s"], "--timeout"),
    ("spec timeout word", ["run", "{spec_bad_timeout}", "--results", "{out}/r"], "experiment.timeout"),
    (
        "run scheduler bad",
        ["run", "{noop_spec}", "--results", "{out}/r", "--scheduler", "somewhere"],
        "expected a scheduler address such as tcp://HOST:8786",
    ),
    (
        "run set nic unknown",
        ["run", "{cx_spec}", "--results", "{out}/r", "--set", "nic=bluefield"],
        "--set nic: expected a profile of kind connectx (bluefield1, connectx4, connectx5, connectx6)",
    ),
    (
        "run set nic of another kind",
        ["run", "{cx_spec}", "--results", "{out}/r", "--set", "nic=bluefield2"],
        "found 'bluefield2', a profile of kind offpath",
    ),
    (
        "run set nic not a profile",
        ["run", "{cx_spec}", "--results", "{out}/r", "--set", "nic={empty_toml}"],
        "which cannot be read",
    ),
    (
        "spec nic of another kind",
        ["run", "{cx_spec_bad_nic}", "--results", "{out}/r"],
        "found 'argus-host', a profile of kind flowhost",
    ),
    ("run scheduler local 0", ["run", "{noop_spec}", "--results", "{out}/r", "--scheduler", "local:0"], "local:N"),
    ("report missing folder", ["report", "{out}/none"], "not an experiment results folder"),
    (
        "report acceptable word",
        ["report", "{out}/none", "--with", "{out}/other", "--acceptable", "lots"],
        "--acceptable",
    ),
    ("compare missing folders", ["compare", "{out}/none", "{out}/other", "--report", "{out}/c.html"], "no results"),
    (
        "calibrate scheduler bad",
        ["calibrate", "connectx5", "--dry-run", "--scheduler", "somewhere"],
        "expected a scheduler address such as tcp://HOST:8786",
    ),
    (
        "calibrate scheduler refused",
        ["calibrate", "connectx5", "--dry-run", "--scheduler", "tcp://127.0.0.1:1"],
        "no Dask scheduler answers there",
    ),
    (
        "calibrate flowmeter-local on dask",
        ["calibrate", "flowmeter-local", "--scheduler", "local:1"],
        "calibrate flowmeter-local measures this machine",
    ),
    ("check self jump", ["rules", "check", "{selfjump}"], ":1:1: a rule in group 1 jumps to its own group"),
    ("check jump cycle", ["rules", "check", "{cycle}"], "closes a cycle of jumps"),
    ("check tc goto loop", ["rules", "check", "{tcloop}"], "closes a cycle of jumps"),
    ("check reversed range", ["rules", "check", "{reversed}"], ":1:1: reversed range udp dst 100 : 50"),
    ("classify self jump", ["classify", "--rules", "{selfjump}", "--pcap", "{good_pcap}"], "jumps to its own group"),
    ("classify reversed range", ["classify", "--rules", "{reversed}", "--pcap", "{good_pcap}"], "reversed range"),
    ("convert reversed range", ["rules", "convert", "{reversed}", "--to", "testpmd"], "reversed range"),
    ("convert queue to tc", ["rules", "convert", "{queue_rules}", "--to", "tc"], "queue_rules.flow:3: "),
    ("check long token", ["rules", "check", "{longtoken}"], "..."),
    ("check bom bad line", ["rules", "check", "{bom_bad}"], ":2:"),
    ("check empty", ["rules", "check", "{empty_rules}"], "empty.rules: no rules in the file"),
    ("check comments only", ["rules", "check", "{comment_rules}"], "comments.flow: no rules in the file"),
    ("check empty with syntax", ["rules", "check", "{empty_rules}", "--syntax", "tc"], "no rules in the file"),
    ("convert empty", ["rules", "convert", "{empty_rules}", "--to", "tc"], "no rules in the file"),
    (
        "classify empty rules",
        ["classify", "--rules", "{comment_rules}", "--pcap", "{good_pcap}"],
        "no rules in the file",
    ),
    ("simulate empty rules", ["simulate", "--rules", "{comment_rules}", "--duration", "1ms"], "no rules in the file"),
    ("openflow empty", ["rules", "openflow", "{empty_of}"], "empty.of: no rules in the file"),
    (
        "vswitch empty openflow",
        ["vswitch", "--openflow", "{empty_of}", "--trace", "{good_pcap}"],
        "no rules in the file",
    ),
    (
        "vswitch empty json rules",
        ["vswitch", "--openflow", "{empty_json_of}", "--trace", "{good_pcap}"],
        "no rules in the file",
    ),
    # --- inputs a read cannot finish on: a FIFO with no writer (refused, or after a bounded wait for
    # its writer where captures may stream through one), a device, a dangling symlink
    ("pcap info fifo without writer", ["pcap", "info", "{fifo}"], "no writer wrote to within 5 s"),
    ("flows fifo without writer", ["flows", "{fifo}"], "no writer wrote to within 5 s"),
    ("simulate trace fifo", ["simulate", "--trace", "{fifo}", "--duration", "1ms"], "no writer wrote to within 5 s"),
    ("check fifo", ["rules", "check", "{fifo}"], "a named pipe (FIFO), not a rule file"),
    # A device read whole grows without end (issue 38): profiles and measurements are regular files.
    ("simulate nic dev zero", ["simulate", "--nic", "/dev/zero", "--duration", "1ms"], "not a regular file"),
    ("flowhost host dev zero", ["flowhost", "--host", "/dev/zero"], "not a regular file"),
    ("calibrate dev zero", ["calibrate", "/dev/zero", "--dry-run"], "not a regular file"),
    (
        "calibrate measurements dev zero",
        ["calibrate", "--base", "connectx5", "--measurements", "/dev/zero", "-o", "{out}/m.toml"],
        "a device, not a measurement file",
    ),
    ("simulate nic fifo", ["simulate", "--nic", "{fifo}", "--duration", "1ms"], "not a regular file"),
    ("classify rules fifo", ["classify", "--rules", "{fifo}", "--pcap", "{good_pcap}"], "a named pipe (FIFO)"),
    ("openflow fifo", ["rules", "openflow", "{fifo}"], "a named pipe (FIFO), not a rule file"),
    ("vswitch openflow fifo", ["vswitch", "--openflow", "{fifo}", "--trace", "{good_pcap}"], "a named pipe (FIFO)"),
    ("check spec fifo", ["check", "{fifo}"], "a named pipe (FIFO), not a spec file"),
    ("pvp megaflows fifo", ["pvp", "--megaflows", "{fifo}"], "a named pipe (FIFO), not a megaflow counts file"),
    ("check device", ["rules", "check", "/dev/null"], "a device, not a rule file"),
    ("pcap info dangling symlink", ["pcap", "info", "{dangling}"], "dangling.pcap"),
    ("check dangling symlink", ["rules", "check", "{dangling}"], "No such file or directory"),
    ("classify rules directory", ["classify", "--rules", "{out}", "--pcap", "{good_pcap}"], "directory"),
    ("check directory", ["rules", "check", "{out}"], "directory"),
    ("check binary", ["rules", "check", "{binary_rules}"], "binary_rules.flow"),
    ("simulate rules self jump", ["simulate", "--rules", "{selfjump}", "--duration", "1ms"], "its own group"),
    # --- click usage errors: one line for every command
    ("gen missing output", ["gen"], "Missing option '-o'"),
    ("classify missing rules", ["classify", "--pcap", "x.pcap"], "Missing option '--rules'"),
    ("rules convert bad choice", ["rules", "convert", "x.flow", "--to", "p4"], "'p4' is not one of"),
    ("flowhost cores abc", ["flowhost", "--cores", "abc"], "'--cores': expected an integer such as 16, found 'abc'"),
    ("pcap info two args", ["pcap", "info", "a", "b"], "unexpected extra argument"),
    ("results unknown option", ["results", "--bogus"], "No such option"),
    ("vswitch unknown option", ["vswitch", "--bogus"], "No such option"),
    # --- a newcomer's mistakes (the README walked command by command)
    (
        "paths shares above 100%",
        ["paths", "--flow", "client->soc READ 4KiB x 80%", "--flow", "host->soc WRITE 64KiB x 30%"],
        "the shares sum to 110% (80% + 30%)",
    ),
    ("paths shares below 100%", ["paths", "--flow", "client->soc READ 4KiB x 50%"], "must sum to 100%"),
    (
        "paths share missing",
        ["paths", "--flow", "client->soc READ 4KiB x 80%", "--flow", "host->soc WRITE 64KiB"],
        "--flow 'host->soc WRITE 64KiB': no share",
    ),
    (
        "compare nothing in common",
        ["compare", "{noop_a_results}", "{noop_b_results}"],
        "no point and metric in common (2 only in A, 2 only in B)",
    ),
    (
        "run only matches nothing",
        ["run", "{noop_spec}", "--results", "{out}/r", "--only", "x=5"],
        "--only: x=5 matches none of the 1 points of noop (its points have x in {0.0})",
    ),
    ("gen packets 0", ["gen", "--packets", "0", "-o", "{out}/g.pcap"], "--packets: 0 is too small: at least 1"),
    (
        "gen size reversed range",
        ["gen", "--size", "1518-64", "-o", "{out}/g.pcap"],
        "--size: range '1518-64' goes from 1518 B down to 64 B",
    ),
    (
        "gen size too large",
        ["gen", "--size", "64-10000", "-o", "{out}/g.pcap"],
        "--size: frame size 10000 B is outside 64-9018 B",
    ),
    (
        "gen size too small for headers",
        ["gen", "--size", "64-1518", "--ipv6", "--vxlan", "42", "--packets", "10", "-o", "{out}/g.pcap"],
        "--size 64-1518: 64 B frame cannot hold",
    ),
    (
        "simulate gen size too small",
        ["simulate", "--gen", "size=10", "--duration", "1ms"],
        "--gen size: frame size 10 B is outside 64-9018 B",
    ),
    (
        "simulate install start past end",
        ["simulate", "--install-batch", "10", "--install-start", "2s", "--duration", "10ms"],
        "--install-start 2s is not before the end of the run (--duration 10ms)",
    ),
    (
        "rss queues above reta",
        ["rss", "{good_pcap}", "--queues", "200"],
        "200 queues is more than the RETA (indirection table) size 128",
    ),
    (
        "rss key too short",
        ["rss", "{good_pcap}", "--queues", "4", "--key", "1234"],
        "--key: an RSS key has 40 or 52 bytes, found 2",
    ),
    ("gen rate max without packets", ["gen", "--rate", "max", "-o", "{out}/g.pcap"], "give --packets N"),
    (
        "classify pcap is a rule file",
        ["classify", "--rules", "{good_rules}", "--pcap", "{good_rules}"],
        "good.flow: not a pcap/pcapng file",
    ),
    ("pcap info text names the file", ["pcap", "info", "{text}"], "notes.pcap: not a pcap/pcapng file"),
    ("rss text names the file", ["rss", "{text}", "--queues", "4"], "notes.pcap: not a pcap/pcapng file"),
    (
        "flows format contradicts suffix",
        ["flows", "{good_pcap}", "--format", "csv", "-o", "{out}/f.parquet"],
        "--format csv contradicts the output name",
    ),
    (
        "flows idle zero",
        ["flows", "{good_pcap}", "--idle", "0s", "-o", "{out}/f.csv"],
        "--idle: a duration must be positive",
    ),
    (
        "simulate duration without unit",
        ["simulate", "--duration", "10"],
        "'--duration': expected a duration such as 500ms",
    ),
    (
        "simulate install start without installer",
        ["simulate", "--install-start", "5ms", "--duration", "10ms"],
        "--install-start 5ms needs an installer",
    ),
    ("rules gen count 0", ["rules", "gen", "--count", "0", "-o", "{out}/x.flow"], "--count: 0 is too small"),
    ("pvp megaflows binary", ["pvp", "--megaflows", "{good_pcap}"], "not a text (JSON) file"),
    (
        "reproduce all and a study",
        ["reproduce", "--all", "offpath", "--results", "{out}/rr", "--reports", "{out}/rp"],
        "give either --all or study names (offpath), not both",
    ),
    (
        "results export missing folder",
        ["results", "export", "{out}/nope", "--csv"],
        "nope: no results there, nor an experiment of that name in",
    ),
    (
        "calibrate measurements binary",
        ["calibrate", "--base", "connectx5", "--measurements", "{good_pcap}", "-o", "{out}/m.toml"],
        "not a text (CSV) file",
    ),
    (
        "calibrate measurements metric typo",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_typo}", "-o", "{out}/m.toml"],
        "metric 'rx_gbsp' is not one pam21-fig2b reports (did you mean 'rx_gbps'?",
    ),
    (
        "calibrate measurements short row",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_short}", "-o", "{out}/m.toml"],
        "m_short.csv:2: no value for column(s) value",
    ),
    (
        "calibrate measurements column typo",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_rule}", "-o", "{out}/m.toml"],
        "matches 13 points of pam21-fig2b; give column(s) rules (values {0, 10000",
    ),
    (
        "calibrate measurements no such point",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_point}", "-o", "{out}/m.toml"],
        "no point of pam21-fig2b has groups=3 (its points have groups in {1, 2, 4, 8, 16})",
    ),
    (
        "calibrate fewshot set negative",
        [
            "calibrate",
            "--base",
            "connectx5",
            "--measurements",
            "{m_good}",
            "-o",
            "{out}/m.toml",
            "--set",
            "steering_cache_entries=-5",
        ],
        "--set steering_cache_entries=-5: parameter 'steering_cache_entries' must be > 0, got -5",
    ),
    (
        "results export into a file as a folder",
        ["results", "export", "{noop_a_results}", "--csv", "-o", "{good_rules}/x.csv"],
        "good.flow is a file, not a folder",
    ),
    (
        "report into a file as a folder",
        ["report", "{noop_a_results}", "-o", "{good_rules}/sub/x.html"],
        "good.flow is a file, not a folder",
    ),
    (
        "results export csv named parquet",
        ["results", "export", "{noop_a_results}", "--csv", "-o", "{out}/x.parquet"],
        "x.parquet is a parquet name, but --csv was given",
    ),
    (
        "report output not html",
        ["report", "{noop_a_results}", "-o", "{out}/r.png"],
        "r.png: the report is an HTML page; give a name ending in .html",
    ),
    (
        "compare report not html",
        ["compare", "{noop_a_results}", "{noop_a_results}", "--report", "{out}/c.png"],
        "c.png: the report is an HTML page",
    ),
    (
        "compare plot not an image",
        ["compare", "{noop_a_results}", "{noop_a_results}", "--plot", "{out}/d.txt"],
        "d.txt: the plot is an image; give a name ending in .png",
    ),
    (
        "run set packets beyond the generator",
        ["run", "{gen_spec}", "--results", "{out}/r", "--set", "packets=1e12"],
        "--set packets: expected a count such as 10000, 10k or 1M from 1 to 4,294,967,296, found '1e12'",
    ),
    (
        "paths set unknown parameter",
        ["paths", "--flow", "client->soc READ 4KiB", "--set", "soc_cors=1"],
        "--set soc_cors: not a parameter of profile bluefield2 (did you mean 'soc_cores'",
    ),
    (
        "simulate set unknown parameter",
        ["simulate", "--set", "steering_cache_entrie=1", "--duration", "1ms"],
        "--set steering_cache_entrie: not a parameter of profile connectx5 (did you mean 'steering_cache_entries'?",
    ),
    ("pvp set unknown parameter", ["pvp", "--set", "bogus=1"], "--set bogus: not a parameter of profile connectx5-25g"),
    (
        "pvp gbps above the line rate",
        ["pvp", "--gbps", "100"],
        "--gbps 100.0: above the line rate of connectx5-25g (25 Gbps on the wire)",
    ),
    (
        "vswitch offered above the line rate",
        ["vswitch", "--openflow", "{of_rules}", "--trace", "{good_pcap}", "--offered", "100Gbps"],
        "--offered 100Gbps: above the line rate of connectx5-25g (25 Gbps on the wire)",
    ),
    (
        "paths range smaller than payload",
        ["paths", "--flow", "client->soc READ 4KiB in 1B"],
        "in: the address range (1 B) is smaller than one request's payload (4 KiB)",
    ),
    ("paths payload unit unknown", ["paths", "--flow", "client->soc READ 1TiB"], "at most 1 GiB), found '1TiB'"),
    (
        "compare two targets' results",
        ["compare", "{noop_a_results}", "{gen_results}"],
        "A holds synthetic.noop runs (noop_a), B gen.rate runs (gen_small); give two result folders of one experiment",
    ),
    (
        "report with another target's results",
        ["report", "{noop_a_results}", "--with", "{gen_results}", "-o", "{out}/w.html"],
        "(A): no point and metric in common (2 only in A, 4 only in B): "
        "A holds synthetic.noop runs (noop_a), B gen.rate",
    ),
    (
        "reproduce study typo",
        ["reproduce", "ovs_offload", "--results", "{out}/rr", "--reports", "{out}/rp"],
        "ovs_offload: no such study (did you mean ovs-offload? studies in",
    ),
    ("results ls results is a file", ["results", "ls", "--results", "{good_rules}"], "good.flow: not a folder"),
    (
        "results ls results missing",
        ["results", "ls", "--results", "{out}/no-such-results"],
        "no-such-results: no such folder",
    ),
    (
        "run rate above the capture card's line rate",
        ["run", "{flowhost_spec}", "--results", "{out}/r", "--set", "rate=200Gbps"],
        "fh: rate 200Gbps: above the line rate of napatech-nt100 (100 Gbps on the wire)",
    ),
    (
        "run rate above the ConnectX port's line rate",
        ["run", "{cx_spec}", "--results", "{out}/r", "--set", "rate=150Gbps"],
        "cx: rate 150 Gbps is above the line rate of nic connectx5 (100 Gbps on the wire, at most 8.224 Mpps of 1500 B",
    ),
    (
        "run pps above the ConnectX port's line rate",
        ["run", "{cx_spec}", "--results", "{out}/r", "--set", "size=64", "--set", "pps=200Mpps"],
        "cx: pps 200 Mpps is above the line rate of nic connectx5 (100 Gbps on the wire, at most 148.810 Mpps of 64 B",
    ),
    (
        "paths set a fraction of a core",
        ["paths", "--flow", "client->soc READ 4KiB", "--set", "soc_cores=0.5"],
        "parameter 'soc_cores' must be a whole number, got 0.5",
    ),
    (
        "simulate set a fraction of a PCIe lane",
        ["simulate", "--set", "pcie_lanes=15.5", "--duration", "1ms"],
        "parameter 'pcie_lanes' must be a whole number, got 15.5",
    ),
    (
        "run only parameter typo",
        ["run", "{gen_spec}", "--results", "{out}/r", "--only", "sizes=64"],
        "--only sizes: target gen.rate has no parameter 'sizes' (did you mean 'size'? it has: size, imix",
    ),
    (
        "calibrate measurements other unit",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_mbps}", "-o", "{out}/m.toml"],
        "unit 'Mbps', but pam21-fig2b reports rx_gbps in Gbps; convert the value to Gbps",
    ),
    (
        "calibrate refit without its measurements",
        ["calibrate", "{moved_profile}", "--dry-run"],
        "its [fitted_on] measurements name",
    ),
    (
        "rss reta not a power of two",
        ["rss", "{good_pcap}", "--queues", "4", "--reta-size", "100"],
        "--reta-size: 100 is not a power of two",
    ),
    # README walk (first half)
    (
        "gen flows 0 names the option",
        ["gen", "--flows", "0", "--packets", "10", "-o", "{out}/g.pcap"],
        "--flows: 0 is too small: at least 1",
    ),
    (
        "simulate gen key twice",
        ["simulate", "--gen", "flows=10,flows=20", "--duration", "1ms"],
        "--gen flows: given twice",
    ),
    (
        "simulate gen size list with commas",
        ["simulate", "--gen", "size=64,594,1518", "--duration", "1ms"],
        "a size list takes ';' between sizes: size=64;594;1518",
    ),
    (
        "simulate gen vxlan negative",
        ["simulate", "--gen", "vxlan=-1", "--duration", "1ms"],
        "--gen vxlan: expected a VXLAN VNI, a whole number from 0 to 16,777,215, found '-1'",
    ),
    (
        "simulate gen vlan too large",
        ["simulate", "--gen", "vlan=5000", "--duration", "1ms"],
        "--gen vlan: expected an 802.1Q VLAN id, a whole number from 0 to 4,095, found '5000'",
    ),
    (
        "simulate gen seed negative",
        ["simulate", "--gen", "seed=-1", "--duration", "1ms"],
        "--gen seed: expected a seed",
    ),
    (
        "simulate gen zipf not a number",
        ["simulate", "--gen", "zipf=abc", "--duration", "1ms"],
        "--gen zipf: expected a number such as 1.1, found 'abc'",
    ),
    (
        "simulate set a negative cost",
        ["simulate", "--set", "nf_packet_ns=-1", "--duration", "1ms"],
        "parameter 'nf_packet_ns' = -1 is negative",
    ),
    (
        "rules openflow on a testpmd file",
        ["rules", "openflow", "{good_rules}"],
        "good.flow: testpmd 'flow create' rules, not OpenFlow (ovs-ofctl syntax): 'nicbench rules check",
    ),
    (
        "vswitch openflow on a tc file",
        ["vswitch", "--openflow", "{tcloop}", "--trace", "{good_pcap}"],
        "loop.tc: tc flower rules, not OpenFlow",
    ),
    (
        "run set nic to a missing profile",
        ["run", "{cx_spec}", "--results", "{out}/r", "--set", "nic={out}/mine.toml"],
        "mine.toml', which cannot be read: No such file or directory",
    ),
    (
        "pvp set a negative cost",
        ["pvp", "--set", "steering_lookup_ns=-5"],
        "parameter 'steering_lookup_ns' = -5 is negative",
    ),
    # CLI sweep: every option of every command with values users get wrong (empty, huge, wrong type,
    # options the chosen mode ignores)
    (
        "flows max-flows 1e30",
        ["flows", "{good_pcap}", "--max-flows", "1e30"],
        "--max-flows: 1e30 is too large: at most 2,147,483,646",
    ),
    ("flows max-flows 0", ["flows", "{good_pcap}", "--max-flows", "0"], "--max-flows: 0 is too small: at least 1"),
    (
        "convert dev with a space",
        ["rules", "convert", "{good_rules}", "--to", "tc", "--dev", "my dev"],
        "'--dev': 'my dev' is not an interface name (allowed: 1 to 15 bytes",
    ),
    (
        "convert dev empty",
        ["rules", "convert", "{good_rules}", "--to", "tc", "--dev", ""],
        "'' is not an interface name",
    ),
    (
        "convert dev for testpmd",
        ["rules", "convert", "{good_rules}", "--to", "testpmd", "--dev", "eth1"],
        "--dev applies to --to tc only, not --to testpmd",
    ),
    (
        "convert port for tc",
        ["rules", "convert", "{good_rules}", "--to", "tc", "--port", "3"],
        "--port applies to --to testpmd only, not --to tc",
    ),
    (
        "simulate rules empty path",
        ["simulate", "--rules", "", "--duration", "1ms"],
        "Invalid value for '--rules': '' is empty (give a file name)",
    ),
    ("pcap info empty path", ["pcap", "info", ""], "Invalid value for 'FILE': '' is empty (give a file name)"),
    ("run results empty path", ["run", "{noop_spec}", "--results", ""], "Invalid value for '--results': '' is empty"),
    (
        "reproduce reports empty path",
        ["reproduce", "offpath", "--reports", ""],
        "Invalid value for '--reports': '' is empty (give a folder name)",
    ),
    ("simulate gen empty", ["simulate", "--gen", "", "--duration", "1ms"], "--gen: empty; give KEY=VALUE pairs"),
    (
        "simulate generated empty",
        ["simulate", "--generated", "", "--duration", "1ms"],
        "'--generated': expected a count such as 10000",
    ),
    (
        "simulate install rate empty",
        ["simulate", "--install-rate", "", "--duration", "1ms"],
        "--install-rate: expected a rate such as 100k/s, found ''",
    ),
    (
        "simulate install batch 0",
        ["simulate", "--install-batch", "0", "--duration", "1ms"],
        "'--install-batch': expected a count such as 10000, 10k or 1M or 'none' from 1 to 4,194,304, found '0'",
    ),
    (
        "run rep 1e30",
        ["run", "{noop_spec}", "--results", "{out}/r", "--rep", str(10**30)],
        "noop has 1 repetition (0 to 0); --repeat N runs more",
    ),
    (
        "run rep beyond repeat",
        ["run", "{noop_spec}", "--results", "{out}/r", "--rep", "1"],
        "--rep: 1: noop has 1 repetition",
    ),
    (
        "run timeout 1e18",
        ["run", "{noop_spec}", "--results", "{out}/r", "--timeout", "1e18"],
        "--timeout: a timeout is at most 365 days (31,536,000 s), found '1e18'",
    ),
    ("check set empty", ["check", "{noop_spec}", "--set", ""], "--set: expected NAME=VALUE, found ''"),
    ("run only empty", ["run", "{noop_spec}", "--results", "{out}/r", "--only", ""], "--only: expected NAME=VALUE"),
    (
        "compare workdir without rev",
        ["compare", "{noop_a_results}", "{noop_a_results}", "--workdir", "{out}/w"],
        "/w: applies to --rev only",
    ),
    (
        "calibrate fewshot with sweeps",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_good}", "-o", "{out}/m.toml", "--sweeps", "3"],
        "--sweeps applies to a full calibration (calibrate NIC), not to a few-shot fit",
    ),
    (
        "calibrate refit with study",
        ["calibrate", "{moved_profile}", "--study", "pam21"],
        "--study applies to a full calibration (calibrate NIC), not to repeating the few-shot fit",
    ),
    ("calibrate study empty", ["calibrate", "connectx5", "--dry-run", "--study", ""], "--study: '' is empty"),
    (
        "vswitch uplink empty",
        ["vswitch", "--openflow", "{of_rules}", "--trace", "{good_pcap}", "--uplink", ""],
        "vswitch: --uplink: '' is not a port name",
    ),
    (
        "megaflows in-port with a space",
        ["vswitch", "megaflows", "--openflow", "{of_rules}", "--pcap", "{good_pcap}", "--in-port", "p 0"],
        "vswitch megaflows: --in-port: 'p 0' is not a port name",
    ),
    (
        "simulate profile value of the wrong type",
        ["simulate", "--nic", "{profile_wrong_type}", "--duration", "1ms"],
        'wrong_type.toml:4:9: invalid type: string "lots", expected f64',
    ),
    (
        "gen packets 1e30",
        ["gen", "--packets", "1e30", "-o", "{out}/g.pcap"],
        "--packets: 1e30 is too large: at most 4,294,967,296",
    ),
    (
        "simulate trace text names the file",
        ["simulate", "--trace", "{text}", "--duration", "1ms"],
        "notes.pcap: not a pcap/pcapng file",
    ),
    (
        "megaflows truncated pcap names the file",
        ["vswitch", "megaflows", "--openflow", "{of_rules}", "--pcap", "{truncated_record}"],
        "cut.pcap: packet 1 at byte offset 104",
    ),
    (
        "flows duration of a pcap",
        ["flows", "{good_pcap}", "--duration", "1s"],
        "--duration 1s: applies to --live IFACE only",
    ),
    (
        "gen duration with rate max",
        ["gen", "--rate", "max", "--packets", "10", "--duration", "1ms", "-o", "{out}/g.pcap"],
        "--duration 1ms: --rate max writes unpaced packets",
    ),
    (
        "simulate groups without generated",
        ["simulate", "--rules", "{good_rules}", "--groups", "3", "--duration", "1ms"],
        "--groups 3 applies only with --generated N",
    ),
    (
        "simulate install op without installer",
        ["simulate", "--install-op", "delete", "--duration", "1ms"],
        "--install-op delete applies only with an installer",
    ),
    # --- found by the fuzz targets (issue 38, FUZZING.md): Python's parsers past their limits, and
    # digitized figures the study's mapper could not read (tracebacks before)
    ("pvp megaflows nested", ["pvp", "--megaflows", "{fuzz}/megaflows-nested.json"], "nested too deeply"),
    (
        "pvp megaflows huge integer",
        ["pvp", "--megaflows", "{fuzz}/megaflows-huge-int.json"],
        "megaflows-huge-int.json: not a megaflow counts file: an integer of more than 4300 digits",
    ),
    (
        "pvp megaflows newline in a name",
        ["pvp", "--megaflows", "{fuzz}/megaflows-newline-in-variant.json"],
        # The newline written as an escape, whether the model's serde or a schema check names it.
        "upli\\nk",
    ),
    ("run spec nested", ["run", "{fuzz}/spec-nested.toml"], "spec-nested.toml: not a spec: nested too deeply"),
    ("run spec huge integer", ["run", "{fuzz}/spec-huge-int.toml"], "an integer of more than 4300 digits"),
    (
        "calibrate measurements digitized without x_unit",
        [
            "calibrate",
            "--base",
            "connectx5",
            "--measurements",
            "{fuzz}/measurements-digitized-no-x-unit.csv",
            "-o",
            "{out}/m.toml",
        ],
        "nor a digitized figure (columns figure, nic, panel, series, x, x_nominal, x_unit, y, y_unit",
    ),
    (
        "calibrate measurements digitized y not a number",
        [
            "calibrate",
            "--base",
            "connectx5",
            "--measurements",
            "{fuzz}/measurements-digitized-bad-y.csv",
            "-o",
            "{out}/m.toml",
        ],
        "cannot map this digitized figure (could not convert string to float: '98.8x')",
    ),
    (
        "calibrate measurements figure 3 unknown series",
        [
            "calibrate",
            "--base",
            "connectx5",
            "--measurements",
            "{fuzz}/measurements-fig-3-unknown-series.csv",
            "-o",
            "{out}/m.toml",
        ],
        "measurements-fig-3-unknown-series.csv: study pam21's make_reference.py cannot map",
    ),
    (
        "calibrate measurements bad byte past 8 KiB",
        [
            "calibrate",
            "--base",
            "connectx5",
            "--measurements",
            "{fuzz}/measurements-bad-utf8-past-8k.csv",
            "-o",
            "{out}/m.toml",
        ],
        "measurements-bad-utf8-past-8k.csv: not a text (CSV) file",
    ),
]


def _write_pcap(path: Path, linktype: int, records: list[bytes], cut: int = 0) -> str:
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype))
    for i, data in enumerate(records):
        out += struct.pack("<IIII", 1, i, len(data), len(data)) + data
    path.write_bytes(bytes(out[: len(out) - cut]))
    return str(path)


def _long_capture(path: Path, trace: Path) -> str:
    """A capture that takes minutes to read but no disk: the records of `trace`, then 16 GiB of hole
    (a sparse file), which reads as ~10^9 empty records."""
    path.write_bytes(trace.read_bytes())
    os.truncate(path, 16 << 30)
    return str(path)


def _fifo(path: Path) -> str:
    """A named pipe nobody ever writes to."""
    os.mkfifo(path)
    return str(path)


def _dangling(path: Path) -> str:
    """A symbolic link to a file that does not exist."""
    path.symlink_to(path.parent / "no-such-target")
    return str(path)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, small_trace) -> dict[str, str]:
    d = tmp_path_factory.mktemp("bad_inputs")
    frame = bytes(64)

    def text(name: str, content: str | bytes) -> str:
        path = d / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return str(path)

    return {
        "out": str(d),
        # The inputs the fuzz targets found, kept as files (python/tests/fixtures/fuzz).
        "fuzz": str(Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"),
        "good_pcap": str(small_trace),
        "good_rules": text("good.flow", GOOD_RULE),
        "two_rules": text(
            "two.flow", GOOD_RULE + "flow create 0 priority 1 ingress pattern eth / ipv4 / end actions drop / end\n"
        ),
        "three_rules": text("three.flow", "".join(GOOD_RULE.replace("53", str(port)) for port in (53, 54, 55))),
        "long_capture": _long_capture(d / "long.pcap", small_trace),
        "sctp_rules": text("sctp.flow", "flow create 0 ingress pattern eth / ipv4 / sctp / end actions drop / end\n"),
        "vlan6_rules": text(
            "vlan6.flow",
            "flow create 0 ingress pattern eth / vlan / vlan / ipv6 / tcp / end actions drop / end\n",
        ),
        "empty": text("empty.pcap", b""),
        "text": text("notes.pcap", "these are not packets\n"),
        "truncated_header": text("short.pcap", struct.pack("<IHH", 0xA1B2C3D4, 2, 4)),
        "truncated_record": _write_pcap(d / "cut.pcap", 1, [frame, frame], cut=10),
        "wifi": _write_pcap(d / "wifi.pcap", 105, [frame]),
        # Linux cooked v2 (IPv4 protocol) around a minimal IPv4 header: decoded, but not Ethernet.
        "sll2": _write_pcap(d / "cooked.pcap", 276, [struct.pack(">HH16x", 0x0800, 0) + b"\x45" + bytes(19)]),
        "of_rules": text("drop.of", "table=0,priority=1,actions=drop\n"),
        "cx_spec": text("cx.toml", '[experiment]\nname = "cx"\ntarget = "connectx.forward"\nrepeat = 1\n'),
        "cx_spec_bad_nic": text(
            "cxbad.toml", '[experiment]\nname = "cxbad"\ntarget = "connectx.forward"\n[params]\nnic = "argus-host"\n'
        ),
        "empty_toml": text("empty.toml", ""),
        "gen_spec": text("gen.toml", '[experiment]\nname = "gen"\ntarget = "gen.rate"\nrepeat = 1\n'),
        "noop_spec": text("noop.toml", '[experiment]\nname = "noop"\ntarget = "synthetic.noop"\nrepeat = 1\n'),
        "flowhost_spec": text("fh.toml", '[experiment]\nname = "fh"\ntarget = "flowhost.run"\nrepeat = 1\n'),
        "spec_bad_timeout": text(
            "slow.toml", '[experiment]\nname = "slow"\ntarget = "synthetic.noop"\ntimeout = "whenever"\n'
        ),
        "selfjump": text(
            "selfjump.flow", "flow create 0 group 1 ingress pattern eth / end actions jump group 1 / end\n"
        ),
        "cycle": text(
            "cycle.flow",
            "flow create 0 group 0 ingress pattern eth / end actions jump group 1 / end\n"
            "flow create 0 group 1 ingress pattern eth / end actions jump group 2 / end\n"
            "flow create 0 group 2 ingress pattern eth / end actions jump group 1 / end\n",
        ),
        "tcloop": text(
            "loop.tc",
            "tc filter add dev eth0 ingress chain 1 flower action goto chain 2\n"
            "tc filter add dev eth0 ingress chain 2 flower action goto chain 1\n",
        ),
        "reversed": text("reversed.cb", "@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t100 : 50\t0x11/0xFF\n"),
        "queue_rules": text(
            "queue_rules.flow",
            "# to tc\n" + GOOD_RULE + "flow create 0 ingress pattern eth / end actions queue index 1 / end\n",
        ),
        "longtoken": text(
            "long.flow", "flow create 0 ingress pattern eth / " + "x" * (1 << 20) + " / end actions drop / end\n"
        ),
        "bom_bad": text(
            "bom.flow", "\ufeff" + GOOD_RULE + "flow create 0 ingress pattern eth / end actions dropp / end\n"
        ),
        "empty_rules": text("empty.rules", ""),
        "comment_rules": text("comments.flow", "# rules to come\n\n"),
        "empty_of": text("empty.of", ""),
        "empty_json_of": text("empty.json", "[]\n"),
        "fifo": _fifo(d / "nowriter.pcap"),
        "dangling": _dangling(d / "dangling.pcap"),
        "binary_rules": text("binary_rules.flow", bytes(range(256)) * 4),
        "rss_key4": text(
            "rss_key4.flow",
            "flow create 0 ingress pattern eth / ipv4 / udp / end actions rss key 01020304 queues 0 1 end / end\n",
        ),
        "rss_xor": text(
            "rss_xor.flow",
            "flow create 0 ingress pattern eth / ipv4 / end actions rss func simple_xor queues 0 1 end / end\n",
        ),
        "two_fates": text(
            "two_fates.flow",
            "flow create 0 ingress pattern eth / ipv4 / udp dst is 53 / end actions drop / queue index 1 / end\n",
        ),
        "deep_studies": _deep_study(d),
        "of_goto_back": text("goto_back.of", "table=2,actions=goto_table:1\n"),
        "of_long_port": text("long_port.of", "actions=output:" + "p" * 1_000_000 + "\n"),
        "corrupt_results": _store_with_meta(d, "corrupt", "{bad"),
        "list_meta_results": _store_with_meta(d, "listmeta", "[1, 2]"),
        "m_negative": text(
            "m_negative.csv", "experiment,groups,rules,metric,value\npam21-fig2b,1,100000,rx_gbps,-80\n"
        ),
        "mf_list": text("mf_list.json", "[]\n"),
        "mf_negative": text(
            "mf_negative.json", '{"masks": [{"ingress": "uplink", "megaflows": -5, "offloaded": 0}]}\n'
        ),
        "long_name_spec": text(
            "long_name.toml", '[experiment]\nname = "' + "a" * 100_000 + '"\ntarget = "synthetic.noop"\n'
        ),
        # A pcapng Section Header Block of major version 2 (little-endian, 28 bytes, no options).
        "pcapng_v2": text("v2.pcapng", struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 2, 0, -1, 28)),
        # Hand-written measurements for `calibrate --measurements` (pam21 Fig. 2b points), each with one mistake.
        "m_typo": text(
            "m_typo.csv",
            "experiment,groups,rules,metric,value\npam21-fig2b,1,100000,rx_gbps,80\npam21-fig2b,4,100000,rx_gbsp,60\n",
        ),
        "m_good": text("m_good.csv", "experiment,groups,rules,metric,value\npam21-fig2b,1,100000,rx_gbps,80\n"),
        "m_mbps": text(
            "m_mbps.csv", "experiment,groups,rules,metric,value,unit\npam21-fig2b,1,100000,rx_gbps,80000,Mbps\n"
        ),
        # A few-shot profile whose recorded measurements are not beside it (copied without them).
        "moved_profile": text("moved.toml", _moved_profile()),
        "m_short": text("m_short.csv", "experiment,groups,rules,metric,value\npam21-fig2b,1,100000,rx_gbps\n"),
        "m_rule": text("m_rule.csv", "experiment,groups,rule,metric,value\npam21-fig2b,1,100000,rx_gbps,80\n"),
        "m_point": text("m_point.csv", "experiment,groups,rules,metric,value\npam21-fig2b,3,100000,rx_gbps,80\n"),
        # Two results folders with no point in common (x = 1 vs x = 2), for `compare`.
        "noop_a_results": _noop_results(d, "a", 1.0),
        "noop_b_results": _noop_results(d, "b", 2.0),
        "gen_results": _gen_results(d),
        "profile_wrong_type": text(
            "wrong_type.toml", 'name = "x"\nkind = "connectx"\n[param.link_gbps]\nvalue = "lots"\n'
        ),
    }


def _noop_results(d: Path, tag: str, x: float) -> str:
    """The results folder of a 2-repetition synthetic.noop experiment at x."""
    spec = d / f"noop_{tag}.toml"
    spec.write_text(f'[experiment]\nname = "noop_{tag}"\ntarget = "synthetic.noop"\nrepeat = 2\n[params]\nx = {x}\n')
    proc = run_forked(["run", str(spec), "--results", str(d / "results"), "--jobs", "1", "--json"], CASE_TIMEOUT_S)
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    return str(d / "results" / f"noop_{tag}")


def _deep_study(d: Path) -> str:
    """A studies folder whose one study's study.toml nests arrays 2000 deep (a parser limit)."""
    study = d / "studies" / "deep"
    (study / "experiments").mkdir(parents=True)
    (study / "study.toml").write_text("x = " + "[" * 2000 + "]" * 2000 + "\n")
    return str(d / "studies")


def _store_with_meta(d: Path, tag: str, meta_text: str) -> str:
    """A results folder of a synthetic.noop run whose experiment.json is then overwritten."""
    folder = Path(_noop_results(d, tag, 3.0))
    (folder / "experiment.json").write_text(meta_text)
    return str(folder)


def _moved_profile() -> str:
    """connectx5's profile with a [fitted_on] record naming a measurements file that is not there."""
    from nicbench.calibrate import resolve_profile

    text = resolve_profile("connectx5").read_text()
    return text + ('\n[fitted_on]\nbase = "connectx5"\nstudy = "pam21"\nmeasurements = ["gone.csv"]\nparameters = []\n')


def _gen_results(d: Path) -> str:
    """The results folder of a one-run gen.rate experiment (another target than synthetic.noop)."""
    spec = d / "gen_small.toml"
    spec.write_text(
        '[experiment]\nname = "gen_small"\ntarget = "gen.rate"\nrepeat = 1\n[params]\npackets = 100\nflows = 10\n'
    )
    proc = run_forked(["run", str(spec), "--results", str(d / "results"), "--jobs", "1", "--json"], CASE_TIMEOUT_S)
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    return str(d / "results" / "gen_small")


def _run(args: list[str]) -> tuple[subprocess.CompletedProcess | None, float]:
    start = time.perf_counter()
    env = {**os.environ, "COLUMNS": "200"}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "nicbench.cli", *args],
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - start
    return proc, time.perf_counter() - start


@pytest.fixture(scope="module")
def outcomes(inputs) -> dict[str, subprocess.CompletedProcess | None]:
    """Every case run once in a forked process, a few at a time; None for a case that did not end
    within CASE_TIMEOUT_S (it is killed then)."""
    commands = {case_id: [a.format(**inputs) for a in args] for case_id, args, _ in CASES}
    results = run_forked_many(list(commands.values()), CASE_TIMEOUT_S, env={"COLUMNS": "200"}, at_once=4)
    return dict(zip(commands, results))


@pytest.mark.parametrize(("case_id", "args", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(outcomes, case_id, args, fragment):
    proc = outcomes[case_id]
    assert proc is not None, f"{case_id}: no answer within {CASE_TIMEOUT_S} s"
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "panicked" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 2, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith("nicbench: error: "), lines[0][:300]
    assert fragment in lines[0], lines[0][:300]
    assert len(lines[0]) < 1000, "a long token must be cut, not echoed"


def test_table_ids_are_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    "args",
    [
        ["pcap", "info", "{empty}"],
        ["gen", "--zipf", "nan", "-o", "{out}/g.pcap"],
        ["rules", "gen", "--count", "1e12", "-o", "{out}/x.flow"],
    ],
    ids=["library error", "usage error", "cap"],
)
def test_json_errors_are_a_json_object_on_stdout(inputs, args):
    """Under --json an error is also `{"error": LINE, "exit_code": 2}` on stdout (one line); stderr
    keeps the same one line for people."""
    import json

    proc, _ = _run([a.format(**inputs) for a in args] + ["--json"])
    assert proc is not None and proc.returncode == 2, proc and proc.stderr
    [line] = proc.stderr.splitlines()
    error = json.loads(proc.stdout)
    assert error == {"error": line.removeprefix("nicbench: error: "), "exit_code": 2}


def test_flows_json_on_a_truncated_pcap_is_one_document(inputs):
    """`flows --json` on a truncated capture: ONE JSON document, the counts of the packets before the
    bad one with `error` and `exit_code`; the error line on stderr."""
    import json

    proc, _ = _run(["flows", inputs["truncated_record"], "--json"])
    assert proc is not None and proc.returncode == 2, proc and proc.stderr
    [line] = proc.stderr.splitlines()
    stats = json.loads(proc.stdout)
    assert stats["packets"] == 1 and stats["exit_code"] == 2
    assert line == f"nicbench: error: {stats['error']}"


def test_a_bom_is_accepted(inputs, tmp_path):
    path = tmp_path / "bom.flow"
    path.write_text("\ufeff" + GOOD_RULE)
    proc, _ = _run(["rules", "check", str(path), "--json"])
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    import json

    assert json.loads(proc.stdout)["summary"]["rules"] == 1


def _command_paths() -> list[list[str]]:
    """Every command and sub-command of `nicbench`, as argument lists (`["rules", "check"]`)."""
    import click

    from nicbench.cli import main

    ctx = click.Context(main)
    paths: list[list[str]] = []

    def walk(group: click.Group, prefix: list[str]) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if isinstance(command, click.Group):
                walk(command, prefix + [name])
            else:
                paths.append(prefix + [name])

    walk(main, [])
    return paths


def test_every_command_answers_a_bad_option_in_one_line():
    """Click's usage errors (here an unknown option) are the one line for EVERY command and
    sub-command, never click's `Usage: … Error: …` block."""
    paths = _command_paths()
    assert len(paths) > 15
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda p: _run(p + ["--no-such-option"]), paths))
    for path, (proc, _) in zip(paths, results):
        assert proc is not None, path
        lines = proc.stderr.splitlines()
        assert proc.returncode == 2 and len(lines) == 1, (path, proc.stderr)
        assert lines[0].startswith(f"nicbench: error: {' '.join(path)}: No such option '--no-such-option'"), lines[0]
        assert lines[0].endswith(f"(see 'nicbench {' '.join(path)} --help')"), lines[0]


def test_pcap_info_warns_of_records_longer_than_their_frame(tmp_path):
    """caplen > original length (issue 38): no capture tool writes it; read (as libpcap does), but said."""
    frame = bytes(60)
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    out += struct.pack("<IIII", 1, 0, len(frame), 50) + frame
    path = tmp_path / "longer.pcap"
    path.write_bytes(bytes(out))
    proc = run_forked(["pcap", "info", str(path)], CASE_TIMEOUT_S)
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    assert "1 record(s) captured more bytes than their frame had on the wire" in proc.stderr, proc.stderr
    as_json = run_forked(["pcap", "info", str(path), "--json"], CASE_TIMEOUT_S)
    assert json.loads(as_json.stdout)["caplen_above_wire"] == 1, as_json.stdout


# --- Outputs (issue 38): a command that fails leaves nothing under its output name, and no temporary
# file beside it. `{dir}` is a folder of the case's own, empty before the case runs; after it, still empty.
OUTPUT_CASES: list[tuple[str, list[str]]] = [
    (
        # Fails after writing began: the stream turns out to hold fewer packets (2) than rules (3).
        "gen for-rules failing mid-way",
        ["gen", "--for-rules", "{three_rules}", "--size", "64-1518", "--rate", "1Gbps", "--duration", "19.5us"]
        + ["--seed", "8", "-o", "{dir}/g.pcap"],
    ),
    ("flows truncated capture to csv", ["flows", "{truncated_record}", "-o", "{dir}/x.csv"]),
    ("flows truncated capture to parquet", ["flows", "{truncated_record}", "-o", "{dir}/x.parquet"]),
    ("flows text file to jsonl", ["flows", "{text}", "-o", "{dir}/x.jsonl"]),
    ("flows empty file", ["flows", "{empty}", "-o", "{dir}/x.csv"]),
    ("rules convert inexpressible", ["rules", "convert", "{queue_rules}", "--to", "tc", "-o", "{dir}/x.tc"]),
    ("rules gen to tc", ["rules", "gen", "--to", "tc", "-o", "{dir}/x.tc"]),
    (
        "calibrate few-shot bad measurements",
        ["calibrate", "--base", "connectx5", "--measurements", "{m_typo}", "-o", "{dir}/mine.toml"],
    ),
    ("results export of no experiment", ["results", "export", "{dir}/none", "-o", "{dir}/x.csv"]),
    ("report of no experiment", ["report", "{dir}/none", "-o", "{dir}/r.html"]),
]


def test_output_case_ids_are_unique():
    ids = [c[0] for c in OUTPUT_CASES]
    assert len(ids) == len(set(ids))


def test_a_failed_command_leaves_no_output(inputs, tmp_path):
    dirs = [tmp_path / f"case{i}" for i in range(len(OUTPUT_CASES))]
    commands = []
    for d, (_, args) in zip(dirs, OUTPUT_CASES):
        d.mkdir()
        commands.append([a.format(**inputs, dir=d) for a in args])
    results = run_forked_many(commands, CASE_TIMEOUT_S, env={"COLUMNS": "200"}, at_once=4)
    for d, (case_id, _), proc in zip(dirs, OUTPUT_CASES, results):
        assert proc is not None, f"{case_id}: no answer within {CASE_TIMEOUT_S} s"
        lines = proc.stderr.splitlines()
        assert proc.returncode == 2 and len(lines) == 1, (case_id, proc.returncode, proc.stderr[-2000:])
        assert lines[0].startswith("nicbench: error: "), (case_id, lines[0])
        assert sorted(p.name for p in d.iterdir()) == [], f"{case_id}: left {sorted(p.name for p in d.iterdir())}"


# --- Ctrl-C (issue 38): SIGINT a second into a long run ends it within INTERRUPT_BOUND_S, exit code 130,
# with one line `nicbench: interrupted: <what is kept>` (no traceback, no click `Aborted!`) and no output
# left behind, except flows, which keeps its records complete up to the last one. `{dir}` as above;
# `{long_capture}` takes minutes to read. `pvp` is analytic (done well within a second): its Ctrl-C
# goes through the same mapping (`NicbenchGroup.invoke`) and is not timed here.
SIGINT_AFTER_S = 1.0
INTERRUPT_BOUND_S = 1.0
# Commands interrupted together: ten busy processes on two cores (beside the other test worker)
# leave each a fifth of a core, and the 1 s bound is about answering Ctrl-C, not about CPU share.
SIGINT_AT_ONCE = 5

SIGINT_CASES: list[tuple[str, list[str]]] = [
    ("gen", ["gen", "--size", "64", "--duration", "20s", "-o", "{dir}/g.pcap"]),
    ("simulate", ["simulate", "--duration", "60s"]),
    ("flowhost", ["flowhost", "--duration", "3600s"]),
    ("flowhost drawing 16M flows", ["flowhost", "--flows", "16M", "--duration", "1ms"]),
    ("rss", ["rss", "{long_capture}", "--queues", "8"]),
    ("classify", ["classify", "--rules", "{good_rules}", "--pcap", "{long_capture}"]),
    ("pcap info", ["pcap", "info", "{long_capture}"]),
    ("vswitch", ["vswitch", "--openflow", "{of_rules}", "--trace", "{long_capture}"]),
    # A profile of its own (a copy of connectx5) that a finished fit would rewrite: left as it was.
    ("calibrate", ["calibrate", "{dir}/cx.toml", "--sweeps", "20"]),
    ("flows", ["flows", "{long_capture}", "-o", "{dir}/f.csv"]),
]


def test_ctrl_c_ends_every_long_command_at_once(inputs, tmp_path):
    from nicbench.calibrate import resolve_profile
    from nicbench.flows import load_records

    dirs = [tmp_path / f"sigint{i}" for i in range(len(SIGINT_CASES))]
    commands = []
    for d, (_, args) in zip(dirs, SIGINT_CASES):
        d.mkdir()
        commands.append([a.format(**inputs, dir=d) for a in args])
    profile = resolve_profile("connectx5")
    shutil.copy(profile, dirs[[c[0] for c in SIGINT_CASES].index("calibrate")] / "cx.toml")
    results = []
    for first in range(0, len(commands), SIGINT_AT_ONCE):
        results += run_forked_interrupted(commands[first : first + SIGINT_AT_ONCE], SIGINT_AFTER_S, CASE_TIMEOUT_S)
    for d, (case_id, _), (proc, took) in zip(dirs, SIGINT_CASES, results):
        assert proc is not None, f"{case_id}: still running {CASE_TIMEOUT_S} s after SIGINT"
        assert took is not None, f"{case_id}: ended before the SIGINT (exit {proc.returncode}): {proc.stderr[-500:]}"
        assert proc.returncode == 130, (case_id, proc.returncode, proc.stderr[-2000:])
        assert took < INTERRUPT_BOUND_S, f"{case_id}: {took:.2f} s from SIGINT to exit"
        lines = proc.stderr.splitlines()
        said = [line for line in lines if line.startswith("nicbench: ")]
        assert len(said) == 1 and lines[-1] == said[0], (case_id, proc.stderr[-2000:])
        assert said[0].startswith("nicbench: interrupted: "), (case_id, said[0])
        assert "Traceback" not in proc.stderr and "Aborted!" not in proc.stderr, (case_id, proc.stderr[-2000:])
        left = sorted(p.name for p in d.iterdir())
        if case_id == "flows":
            records = load_records(d / "f.csv")
            assert left == ["f.csv"] and records, (left, len(records))
            assert said[0].startswith(f"nicbench: interrupted: {len(records):,} records kept in {d / 'f.csv'}, ")
        elif case_id == "calibrate":
            assert left == ["cx.toml"] and (d / "cx.toml").read_bytes() == profile.read_bytes(), left
        else:
            assert left == [], f"{case_id}: left {left}"

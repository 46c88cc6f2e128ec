//! Runs a scenario JSON (file path or inline) and prints the headline numbers.
//!
//! ```text
//! cargo run --release -p nicbench-models --example simulate -- scenario.json [--full]
//! ```
//! `--full` prints the whole result JSON (A/B checks: same seed ⇒ same output).
use nicbench_models::run_json;

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    let full = std::env::args().nth(2).is_some_and(|a| a == "--full");
    let text = std::fs::read_to_string(&arg).unwrap_or(arg);
    match run_json("connectx", &text, &mut |_| {}) {
        Ok(json) if full => println!("{json}"),
        Ok(json) => {
            let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            for key in [
                "offered_gbps",
                "rx_gbps",
                "loss_ratio",
                "dropped",
                "latency_us",
                "install",
                "model",
                "sim",
            ] {
                println!("{key}: {}", v[key]);
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

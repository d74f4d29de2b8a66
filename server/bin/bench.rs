//! `journal-bench`: drives an MCP endpoint with concurrent clients and reports throughput and
//! latency, beside a baseline (a minimal axum handler answering a body of the same size) that shows
//! this machine's ceiling. See docs/performance.md for the figures and the commands behind them.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use journal::bench::{self, LoadOptions, LoadReport, Op};

/// Load an MCP endpoint and compare it with a baseline server on the same machine.
#[derive(Debug, Parser)]
#[command(name = "journal-bench", version)]
struct Args {
    /// The MCP endpoint, e.g. http://127.0.0.1:7659/mcp.
    #[arg(long, required_unless_present_any = ["serve_baseline", "relay"])]
    url: Option<String>,
    /// A bearer key with read access to the journal; repeat it to spread the clients over several
    /// keys (a key holds at most 16 sessions).
    #[arg(
        long,
        env = "JOURNAL_KEY",
        hide_env_values = true,
        value_delimiter = ',',
        required_unless_present_any = ["serve_baseline", "relay"]
    )]
    key: Vec<String>,
    /// Concurrent clients, each with its own session and connection.
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Requests in all.
    #[arg(long, default_value_t = 20_000)]
    requests: u64,
    /// Stop after this many seconds even if requests remain.
    #[arg(long, default_value_t = 120)]
    seconds: u64,
    /// The mix of requests, as op=weight: ping, tools/list, search, fetch, save_memory, notes_list, note_read,
    /// base_query, search_notes.
    #[arg(long, default_value = "ping=1,tools/list=1,search=4,fetch=2,save_memory=1")]
    mix: String,
    /// The server's process id, to report its CPU time and peak memory (Linux).
    #[arg(long)]
    pid: Option<u32>,
    /// Skip the baseline run.
    #[arg(long)]
    no_baseline: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A file of search queries, one a line (blank lines and lines starting with # are skipped), drawn
    /// at random by `search` requests; without it, eight built-in words.
    #[arg(long, value_name = "FILE")]
    queries: Option<std::path::PathBuf>,
    /// The name of the search tool, for a server whose search is called otherwise; it must take a
    /// `query` argument.
    #[arg(long, default_value = "search")]
    search_tool: String,
    /// More arguments for every search, as a JSON object (e.g. '{"mode": "all_words"}').
    #[arg(long, value_name = "JSON", value_parser = search_arguments)]
    search_arguments: Option<serde_json::Map<String, serde_json::Value>>,
    /// Compare with a baseline already running at this URL (started with --serve-baseline, for
    /// example pinned to the server's core with taskset) instead of one inside this process.
    #[arg(long, value_name = "URL", conflicts_with = "no_baseline")]
    baseline_url: Option<String>,
    /// The protocol the clients speak: 2025-11-25 (a session each) or 2026-07-28 (no session; every
    /// request carries its version and the standard headers).
    #[arg(long, default_value = "2025-11-25", value_parser = ["2025-11-25", "2026-07-28"])]
    protocol: String,
    /// Only serve the baseline on this address (e.g. 127.0.0.1:17999) for --seconds, and measure nothing.
    #[arg(long, value_name = "ADDR")]
    serve_baseline: Option<std::net::SocketAddr>,
    /// Measure what one relay holds instead: `journal relay serve` in a process of its own, --relay-journals
    /// journals connected to it, then --clients agent connections at once through it, each passing
    /// --relay-bytes both ways.
    #[arg(long, conflicts_with_all = ["url", "serve_baseline"])]
    relay: bool,
    #[arg(long, default_value_t = 100)]
    relay_journals: usize,
    #[arg(long, default_value_t = 1024 * 1024)]
    relay_bytes: usize,
    /// The `journal` binary for the relay (default: the one beside journal-bench).
    #[arg(long, value_name = "FILE")]
    journal_bin: Option<std::path::PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn parse_mix(text: &str) -> Result<Vec<(Op, u32)>, String> {
    let mut mix = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (name, weight) = part.split_once('=').unwrap_or((part, "1"));
        let op = Op::parse(name.trim()).ok_or_else(|| {
            format!(
                "unknown request \"{name}\" in --mix: use ping, tools/list, search, fetch, save_memory, notes_list, note_read, base_query, search_notes"
            )
        })?;
        let weight: u32 = weight
            .trim()
            .parse()
            .map_err(|_| format!("the weight of {name} in --mix must be a whole number"))?;
        mix.push((op, weight));
    }
    if mix.iter().all(|(_, w)| *w == 0) {
        return Err("--mix needs at least one request with a weight above 0".into());
    }
    Ok(mix)
}

async fn run(args: Args) -> Result<(), String> {
    if let Some(addr) = args.serve_baseline {
        let addr = bench::baseline::start(addr, 64)
            .await
            .map_err(|e| format!("--serve-baseline {addr}: {e}"))?;
        println!("baseline: axum on http://{addr}/mcp for {} s", args.seconds);
        tokio::time::sleep(Duration::from_secs(args.seconds)).await;
        return Ok(());
    }
    if args.relay {
        return relay(&args).await;
    }
    let url = args.url.clone().ok_or("--url is required")?;
    let mix = parse_mix(&args.mix)?;
    if args.clients == 0 || args.requests == 0 {
        return Err("--clients and --requests must be at least 1".into());
    }
    let queries = match &args.queries {
        Some(file) => read_queries(file)?,
        None => Vec::new(),
    };
    let before = args.pid.map(cpu_seconds).transpose()?;
    let options = LoadOptions {
        url,
        keys: args.key.clone(),
        clients: args.clients,
        requests: args.requests,
        limit: Duration::from_secs(args.seconds),
        mix,
        seed: args.seed,
        queries: std::sync::Arc::new(queries),
        search_tool: args.search_tool.clone(),
        search_arguments: args.search_arguments.clone().unwrap_or_default(),
        body_bytes: None,
        stateless: args.protocol == "2026-07-28",
    };
    let mut report = bench::run(&options).await?;
    let cpu = match (args.pid, before) {
        (Some(pid), Some(before)) => Some(cpu_seconds(pid)? - before),
        _ => None,
    };
    println!(
        "journal: {} clients, {} requests, mix {}, protocol {}",
        args.clients, args.requests, args.mix, args.protocol
    );
    print_report(&mut report);
    if let (Some(pid), Some(cpu)) = (args.pid, cpu) {
        println!(
            "server: {cpu:.2} s CPU ({:.1} µs per request), peak RSS {} MB",
            cpu * 1e6 / report.total().count().max(1) as f64,
            peak_rss_mb(pid)?
        );
    }
    if args.no_baseline {
        return Ok(());
    }
    let size = report.total().mean_bytes();
    let (url, where_) = match &args.baseline_url {
        Some(url) => (url.clone(), "in its own process"),
        None => {
            let addr = bench::baseline::start(([127, 0, 0, 1], 0).into(), size)
                .await
                .map_err(|e| format!("the baseline server could not start: {e}"))?;
            (format!("http://{addr}/mcp"), "in this process")
        }
    };
    let baseline_options = LoadOptions {
        url,
        keys: Vec::new(),
        mix: vec![(Op::Plain, 1)],
        body_bytes: Some(size),
        stateless: false,
        ..options
    };
    let mut baseline = bench::run(&baseline_options).await?;
    println!("baseline: axum answering {size} bytes ({where_}), same clients and requests");
    print_report(&mut baseline);
    let (mut ours, mut theirs) = (report.total(), baseline.total());
    println!(
        "ratio to baseline: throughput {:.0}%, p50 {:.1}x, p99 {:.1}x",
        100.0 * report.throughput() / baseline.throughput().max(1e-9),
        ours.quantile(0.5) / theirs.quantile(0.5).max(1.0),
        ours.quantile(0.99) / theirs.quantile(0.99).max(1.0)
    );
    Ok(())
}

async fn relay(args: &Args) -> Result<(), String> {
    if args.relay_journals == 0 || args.clients == 0 {
        return Err("--relay-journals and --clients must be at least 1".into());
    }
    let journal_bin = match &args.journal_bin {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("journal"),
    };
    let load = bench::relay::RelayLoad {
        journal_bin,
        journals: args.relay_journals,
        connections: args.clients,
        bytes: args.relay_bytes,
        limit: Duration::from_secs(args.seconds),
    };
    let mut report = bench::relay::run(&load).await?;
    let mb = report.bytes_through as f64 / 1e6;
    println!(
        "relay: {} journals connected in {:.2} s; resident {:.1} MB idle, {:.1} MB with them ({:.1} KB a journal), peak {:.1} MB",
        report.journals_connected,
        report.connect_all.as_secs_f64(),
        report.rss_idle_mb,
        report.rss_connected_mb,
        (report.rss_connected_mb - report.rss_idle_mb) * 1024.0 / report.journals_connected as f64,
        report.peak_rss_mb
    );
    println!(
        "agents: {} connections at once ({} failed), TLS handshake through the relay p50 {:.0} µs, p99 {:.0} µs",
        args.clients,
        report.failed_connections,
        report.handshakes.quantile(0.5),
        report.handshakes.quantile(0.99)
    );
    println!(
        "through it: {mb:.0} MB in {:.2} s ({:.0} MB/s); relay CPU {:.2} s ({:.2} ms a MB)",
        report.transfer.as_secs_f64(),
        mb / report.transfer.as_secs_f64().max(1e-9),
        report.transfer_cpu,
        report.transfer_cpu * 1e3 / mb.max(1e-9)
    );
    Ok(())
}

fn print_report(report: &mut LoadReport) {
    println!(
        "  {:<12} {:>8} {:>7} {:>10} {:>9} {:>9} {:>9}",
        "request", "count", "errors", "per s", "p50 µs", "p99 µs", "p99.9 µs"
    );
    let elapsed = report.elapsed.as_secs_f64().max(1e-9);
    for (op, samples) in report.per_op.iter_mut() {
        let count = samples.count();
        let (p50, p99, p999) = (samples.quantile(0.5), samples.quantile(0.99), samples.quantile(0.999));
        println!(
            "  {:<12} {:>8} {:>7} {:>10.0} {:>9.0} {:>9.0} {:>9.0}",
            op.name(),
            count,
            samples.errors,
            count as f64 / elapsed,
            p50,
            p99,
            p999
        );
    }
    let mut total = report.total();
    let (p50, p99, p999) = (total.quantile(0.5), total.quantile(0.99), total.quantile(0.999));
    println!(
        "  {:<12} {:>8} {:>7} {:>10.0} {:>9.0} {:>9.0} {:>9.0}   ({:.2} s)",
        "all",
        total.count(),
        total.errors,
        report.throughput(),
        p50,
        p99,
        p999,
        elapsed
    );
}

/// The queries of a query file: one a line, blank lines and `#` comments skipped.
fn read_queries(file: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("--queries {}: {e}", file.display()))?;
    let queries: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect();
    if queries.is_empty() {
        return Err(format!(
            "--queries {}: the file holds no query; write one query a line",
            file.display()
        ));
    }
    Ok(queries)
}

fn cpu_seconds(pid: u32) -> Result<f64, String> {
    bench::stats::cpu_seconds(pid)
}

/// Peak resident memory of a process, in MB.
fn peak_rss_mb(pid: u32) -> Result<u64, String> {
    Ok(bench::stats::rss_mb(pid, "VmHWM")? as u64)
}

/// `--search-arguments`: a JSON object, or a one-line error saying what is wrong.
fn search_arguments(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err("must be a JSON object, such as {\"mode\": \"all_words\"}".into()),
        Err(error) => Err(format!("is not JSON: {error}")),
    }
}

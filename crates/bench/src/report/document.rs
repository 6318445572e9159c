//! The report's text as a list of blocks, rendered to Markdown and to a
//! self-contained HTML page (inline CSS and SVG, no scripts, nothing
//! fetched), so both say exactly the same thing.

use super::figures::Figures;
use super::plots::Plot;
use super::{bytes, ibytes, Report};
use crate::categories::Search;
use crate::cli::{Cache, Format};
use crate::context::{Context, Dir};

pub enum Block {
    H(u8, String),
    P(String),
    Warn(String),
    Table(Vec<String>, Vec<Vec<String>>),
    List(Vec<String>),
    Code(String),
    /// Where the HTML page puts its plots.
    Plots,
}

fn opt<T: std::fmt::Display>(x: &Option<T>) -> String {
    x.as_ref().map_or("unknown".into(), |v| v.to_string())
}

fn s3(x: f64) -> String {
    format!("{x:.3}")
}

fn pairs(rows: Vec<(&str, String)>) -> Block {
    Block::Table(vec!["".into(), "".into()], rows.into_iter().map(|(k, v)| vec![k.to_string(), v]).collect())
}

pub fn build(r: &Report) -> Vec<Block> {
    let f = &r.figures;
    let mut d = vec![Block::H(1, format!("xsort-bench: {}", r.category.name()))];
    d.push(Block::P(format!(
        "Started {}, finished {}. {}",
        r.started_utc,
        r.finished_utc,
        if r.note.is_empty() { "No note given.".to_string() } else { format!("Note: {}", r.note) }
    )));
    for w in &r.warnings {
        d.push(Block::Warn(format!("WARNING: {w}")));
    }
    d.push(Block::H(2, "Figures".into()));
    d.push(figures(f));
    d.push(Block::H(2, "Questions".into()));
    d.push(Block::List(r.answers.iter().map(|a| format!("**{}** {}", a.question, a.answer)).collect()));
    d.push(Block::H(2, "Plots".into()));
    d.push(Block::Plots);
    d.push(Block::H(2, "Context".into()));
    d.push(context(r));
    d.push(Block::H(3, "Directories".into()));
    d.push(dirs(&r.context.dirs));
    if let Some(se) = &f.search {
        d.push(Block::H(2, "Search".into()));
        d.push(search_table(se));
    }
    d.push(Block::H(2, "Runs".into()));
    d.push(runs(r));
    d.push(Block::H(2, "Command lines".into()));
    let mut cmds: Vec<String> = vec![r.command_line.clone()];
    for run in &r.runs {
        if !cmds.contains(&run.command) {
            cmds.push(run.command.clone());
        }
    }
    d.push(Block::Code(cmds.join("\n")));
    d
}

/// The figures of a report, as label and value rows.
fn figures(f: &Figures) -> Block {
    let mut rows = vec![("Runs", format!("figures over {}", f.over))];
    if let (Some(n), Some(b)) = (f.records, f.bytes) {
        rows.push(("Data", format!("{n} records, {}", bytes(b))));
    }
    if let Some(w) = f.wall_s {
        rows.push((
            "Wall time (s)",
            format!(
                "min {} / median {} / mean {} / p90 {} / max {} / sd {}",
                s3(w.min),
                s3(w.median),
                s3(w.mean),
                s3(w.p90),
                s3(w.max),
                s3(w.stddev)
            ),
        ));
    }
    if let (Some(fl), Some(rd), Some(wr)) = (f.floor_s, f.floor_read_s, f.floor_write_s) {
        rows.push((
            "I/O floor (s)",
            format!(
                "median {} = read {} + write and fsync {} (min {}, max {})",
                s3(fl.median),
                s3(rd.median),
                s3(wr.median),
                s3(fl.min),
                s3(fl.max)
            ),
        ));
    }
    if let Some(x) = f.ratio_to_floor {
        rows.push((
            "xsort / floor",
            format!(
                "{x:.2}x (median over median){}",
                f.ratio_per_run.map_or(String::new(), |p| format!("; per run {:.2}x to {:.2}x", p.min, p.max))
            ),
        ));
    }
    if let Some(t) = &f.target {
        rows.push((
            "Target",
            format!(
                "median at most {:.2}x the floor: {}; aim {:.2}x: {}",
                t.ratio_limit,
                if t.met { "met" } else { "NOT met" },
                t.ratio_aim,
                if t.aim_met { "met" } else { "not met" }
            ),
        ));
    }
    if let (Some(g), Some(t), Some(rps)) = (f.gb_per_s, f.tb_per_min, f.records_per_s) {
        rows.push(("Throughput", format!("{g:.3} GB/s = {t:.4} TB/min = {rps:.0} records/s (median run)")));
    }
    if let Some(se) = &f.search {
        rows.extend(search_rows(se));
    }
    if let Some(p) = &f.price {
        rows.push(("Price", format!("${:.2} over 3 years: one cent buys {:.1} s", p.system_price_usd, p.seconds_per_cent)));
    }
    rows.push(("Energy", f.energy.text.clone()));
    pairs(rows)
}

/// The rows of a search's outcome: its time limit, its cap, and the largest input sorted in time.
fn search_rows(se: &Search) -> Vec<(&'static str, String)> {
    vec![
        ("Time limit", format!("{:.3} s", se.limit_s)),
        ("Search cap", format!("{} ({})", bytes(se.cap_bytes), se.cap_reason)),
        (
            "Result",
            match se.result_bytes {
                Some(b) => format!(
                    "{} ({} records) sorted within the limit{}; {}",
                    bytes(b),
                    se.result_records.unwrap_or(0),
                    if se.hit_cap { ", the cap stopped the search" } else { "" },
                    se.note
                ),
                None => format!("none: {}", se.note),
            },
        ),
    ]
}

/// The search's probes, one row each.
fn search_table(se: &Search) -> Block {
    Block::Table(
        ["probe", "run", "records", "bytes", "wall s", "valid", "within limit"].map(String::from).to_vec(),
        se.steps
            .iter()
            .enumerate()
            .map(|(i, st)| {
                vec![
                    (i + 1).to_string(),
                    st.run_index.to_string(),
                    st.records.to_string(),
                    bytes(st.bytes),
                    s3(st.wall_s),
                    yes(st.valid),
                    yes(st.within_limit),
                ]
            })
            .collect(),
    )
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "NO" }.into()
}

/// The context of a report: the machine, the builds, the settings of the runs and the note.
fn context(r: &Report) -> Block {
    let c = &r.context;
    let mut rows = machine_rows(c);
    rows.extend(build_rows(c));
    rows.extend(settings_rows(r));
    rows.extend([
        ("Energy counters", energy_counters(c)),
        ("GPU", c.gpu.clone()),
        ("Note", if r.note.is_empty() { "(none)".into() } else { r.note.clone() }),
    ]);
    pairs(rows)
}

/// The machine's rows: host, CPU, memory, kernel and disks.
fn machine_rows(c: &Context) -> Vec<(&'static str, String)> {
    vec![
        ("Host", opt(&c.hostname)),
        (
            "CPU",
            format!(
                "{}; {} socket(s), {} cores, {} threads ({} available to this process)",
                opt(&c.cpu.model),
                c.cpu.sockets,
                c.cpu.cores,
                c.cpu.threads,
                c.cpu.available_threads
            ),
        ),
        (
            "Frequency",
            format!(
                "{} MHz now, max {} MHz, governor {}",
                c.cpu.mhz.map_or("unknown".into(), |m| format!("{m:.0}")),
                c.cpu.max_mhz.map_or("unknown".into(), |m| format!("{m:.0}")),
                c.cpu.governor.as_deref().unwrap_or("not exposed")
            ),
        ),
        ("Virtualization", c.cpu.hypervisor.clone().unwrap_or_else(|| "none reported".into())),
        (
            "Memory",
            format!(
                "{} total, {} available, {} page cache at start, {} swap, transparent huge pages {}",
                ibytes(c.memory.total_bytes),
                ibytes(c.memory.available_bytes),
                ibytes(c.memory.page_cache_bytes),
                ibytes(c.memory.swap_total_bytes),
                opt(&c.memory.transparent_hugepages)
            ),
        ),
        ("Kernel / OS", format!("{} / {}", opt(&c.kernel), opt(&c.os))),
        ("Disks", if c.block_devices.is_empty() { "none found".into() } else { c.block_devices.join(", ") }),
    ]
}

/// The builds' rows: the xsort measured and this xsort-bench.
fn build_rows(c: &Context) -> Vec<(&'static str, String)> {
    vec![
        (
            "xsort",
            format!(
                "{} ({}), commit {}{}, {} build, built {}",
                opt(&c.xsort.version),
                c.xsort.path,
                opt(&c.xsort.git_commit),
                if c.xsort.git_dirty == Some(true) { " with uncommitted changes in the tree" } else { "" },
                c.xsort.build_profile,
                opt(&c.xsort.built_utc)
            ),
        ),
        ("xsort-bench", format!("{}, {} build", opt(&c.bench.version), c.bench.build_profile)),
    ]
}

/// The settings' rows: threads, memory and I/O as asked and as xsort's stats report them, the
/// cache scenario, output sync and the records.
fn settings_rows(r: &Report) -> Vec<(&'static str, String)> {
    let s = &r.settings;
    let stats: Vec<_> = r.runs.iter().filter_map(|x| x.xsort_stats.as_ref()).collect();
    let mut modes: Vec<String> = stats.iter().flat_map(|x| x.io_modes()).collect();
    modes.sort();
    modes.dedup();
    let budget = stats.first().map(|x| ibytes(x.memory_budget_bytes));
    let threads = stats.first().map(|x| x.threads.to_string());
    vec![
        (
            "Threads",
            format!(
                "{} (asked: {})",
                threads.unwrap_or_else(|| "unknown".into()),
                s.threads.map_or("xsort's default".into(), |t| t.to_string())
            ),
        ),
        (
            "Memory budget",
            format!(
                "{} (asked: {})",
                budget.unwrap_or_else(|| "unknown".into()),
                s.memory.clone().unwrap_or_else(|| "xsort's default".into())
            ),
        ),
        (
            "I/O",
            format!(
                "{}; transfers per phase (mode size): {}",
                if s.buffered { "buffered (--buffered)" } else { "direct where the file system allows (xsort's default)" },
                if modes.is_empty() { "unknown".into() } else { modes.join(", ") }
            ),
        ),
        (
            "Cache scenario",
            if s.cache == Cache::Cold {
                "cold: input evicted with posix_fadvise(DONTNEED) before each run".into()
            } else {
                "warm: input read through the page cache before each run".into()
            },
        ),
        ("Output sync", if s.sync { "on (xsort --sync: fsync of file and directory before exit)".into() } else { "off".into() }),
        (
            "Records",
            format!(
                "{} bytes, key bytes 0..10, {} records, {} keys",
                s.record_size,
                if s.format == Format::Ascii { "ASCII" } else { "binary" },
                s.distribution
            ),
        ),
    ]
}

/// The energy counters read, or why there are none.
fn energy_counters(c: &Context) -> String {
    if c.energy.measured {
        format!(
            "{}: {}",
            opt(&c.energy.source),
            c.energy.zones.iter().map(|z| format!("{} ({})", z.id, z.name)).collect::<Vec<_>>().join(", ")
        )
    } else {
        format!("none: {}", opt(&c.energy.reason))
    }
}

fn dirs(ds: &[Dir]) -> Block {
    Block::Table(
        ["role", "path", "file system", "mount options", "device", "model", "scheduler", "free"].map(String::from).to_vec(),
        ds.iter()
            .map(|d| {
                vec![
                    d.role.clone(),
                    d.path.clone(),
                    format!("{} on {}", opt(&d.fs_type), opt(&d.mount_point)),
                    opt(&d.mount_options),
                    format!("{}{}", opt(&d.device), d.rotational.map_or("", |r| if r { " (rotational)" } else { " (non-rotational)" })),
                    format!("{} {}", d.vendor.clone().unwrap_or_default(), d.model.clone().unwrap_or_default()).trim().to_string(),
                    opt(&d.scheduler),
                    d.free_bytes.map_or("unknown".into(), |b| format!("{} of {}", bytes(b), bytes(d.total_bytes.unwrap_or(0)))),
                ]
            })
            .collect(),
    )
}

fn runs(r: &Report) -> Block {
    let head = ["run", "purpose", "records", "resident", "floor s", "wall s", "x floor", "CPU %", "disk %", "disk read", "passes", "valid"];
    Block::Table(
        head.map(String::from).to_vec(),
        r.runs
            .iter()
            .map(|x| {
                vec![
                    x.index.to_string(),
                    x.purpose.clone(),
                    x.input.records.to_string(),
                    format!("{:.0}%", x.input_resident_fraction * 100.0),
                    x.floor.as_ref().map_or("-".into(), |f| s3(f.total_s)),
                    s3(x.wall_s),
                    x.ratio_to_floor.map_or("-".into(), |v| format!("{v:.2}")),
                    format!("{:.0}", x.machine.cpu_busy_pct),
                    x.machine.disks.iter().map(|d| format!("{:.0}", d.busy_pct)).collect::<Vec<_>>().join("/"),
                    bytes(x.machine.disks.iter().map(|d| d.read_bytes).sum()),
                    x.xsort_stats.as_ref().map_or("?".into(), |s| s.passes.to_string()),
                    if x.valid { "yes".into() } else { format!("INVALID: {}", x.problems.join("; ")) },
                ]
            })
            .collect(),
    )
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn markdown(doc: &[Block]) -> String {
    let mut o = String::new();
    for b in doc {
        match b {
            Block::H(l, t) => o += &format!("{} {t}\n\n", "#".repeat(*l as usize)),
            Block::P(t) => o += &format!("{t}\n\n"),
            Block::Warn(t) => o += &format!("> **{}**\n\n", md_cell(t)),
            Block::Table(h, rows) => {
                o += &format!("| {} |\n", h.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | "));
                o += &format!("|{}\n", "---|".repeat(h.len()));
                for r in rows {
                    o += &format!("| {} |\n", r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | "));
                }
                o += "\n";
            }
            Block::List(items) => {
                for i in items {
                    o += &format!("- {i}\n");
                }
                o += "\n";
            }
            Block::Code(t) => o += &format!("```\n{t}\n```\n\n"),
            Block::Plots => o += "The plots are in report.html.\n\n",
        }
    }
    o
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Escapes, then turns `**bold**` into `<strong>`.
fn inline(s: &str) -> String {
    let e = esc(s);
    let mut out = String::new();
    for (i, part) in e.split("**").enumerate() {
        if i % 2 == 1 {
            out += &format!("<strong>{part}</strong>");
        } else {
            out += part;
        }
    }
    out
}

const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}\
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}.warn{background:#fee;border:2px solid #c00;color:#900;padding:.5em 1em;font-weight:bold}\
pre{background:#f6f6f6;padding:.7em;overflow-x:auto;font-size:.85em}figure{margin:1em 0}figcaption{font-size:.9em;color:#555}\
svg{max-width:100%;height:auto}";

pub fn html(r: &Report, doc: &[Block], plots: &[Plot]) -> String {
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>xsort-bench {} report</title><style>{CSS}</style></head><body>\n",
        r.category.name()
    );
    for b in doc {
        match b {
            Block::H(l, t) => o += &format!("<h{l}>{}</h{l}>\n", esc(t)),
            Block::P(t) => o += &format!("<p>{}</p>\n", inline(t)),
            Block::Warn(t) => o += &format!("<p class=\"warn\">{}</p>\n", esc(t)),
            Block::Table(h, rows) => {
                o += "<table>";
                if h.iter().any(|c| !c.is_empty()) {
                    o += &format!("<tr>{}</tr>", h.iter().map(|c| format!("<th>{}</th>", esc(c))).collect::<String>());
                }
                for row in rows {
                    o += &format!("<tr>{}</tr>", row.iter().map(|c| format!("<td>{}</td>", esc(c))).collect::<String>());
                }
                o += "</table>\n";
            }
            Block::List(items) => {
                o += &format!("<ul>{}</ul>\n", items.iter().map(|i| format!("<li>{}</li>", inline(i))).collect::<String>());
            }
            Block::Code(t) => o += &format!("<pre>{}</pre>\n", esc(t)),
            Block::Plots => {
                if plots.is_empty() {
                    o += "<p>No valid run to plot.</p>\n";
                }
                for p in plots {
                    o +=
                        &format!("<figure class=\"plot\" id=\"{}\">{}<figcaption>{}</figcaption></figure>\n", p.id, p.svg, esc(&p.caption));
                }
            }
        }
    }
    o += "</body></html>\n";
    o
}

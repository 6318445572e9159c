//! The report's plots, drawn with plotters' SVG backend into strings that
//! the HTML page inlines: the distribution of run times, the phases of each
//! run as stacked bars, throughput and CPU over time during the
//! representative run, the I/O floor beside xsort's time, and for the
//! search categories the sizes probed against the time limit.

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::figures::counted;
use super::Report;
use crate::run::Run;
use crate::xstats::Sample;

/// One drawn plot.
pub struct Plot {
    pub id: &'static str,
    pub caption: String,
    pub svg: String,
}

const W: u32 = 900;
const H: u32 = 340;
const FONT: &str = "sans-serif";
const PHASES: [(&str, RGBColor); 4] = [
    ("input read", RGBColor(31, 119, 180)),
    ("temp write", RGBColor(255, 127, 14)),
    ("temp read", RGBColor(44, 160, 44)),
    ("output write", RGBColor(214, 39, 40)),
];
/// The (x, y) points of a line.
type Points = Vec<(f64, f64)>;
/// A named, coloured line of (x, y) points.
type Line = (&'static str, Points, RGBColor);

const GREY: RGBColor = RGBColor(170, 170, 170);

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plot: {e:?}")
}

fn top(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x * 1.15
    } else {
        1.0
    }
}

/// Every plot that has data.
pub fn all(r: &Report) -> Result<Vec<Plot>> {
    let valid = counted(&r.runs);
    let mut v = Vec::new();
    if valid.is_empty() {
        return Ok(v);
    }
    v.push(run_times(&valid, r.figures.floor_s.map(|f| f.median))?);
    v.push(phases(&valid)?);
    if let Some(run) = r.representative_run.and_then(|i| r.runs.iter().find(|x| x.index == i)) {
        v.push(timeline(run, r)?);
    }
    if let (Some(fl), Some(rd), Some(wr), Some(w)) = (r.figures.floor_s, r.figures.floor_read_s, r.figures.floor_write_s, r.figures.wall_s)
    {
        v.push(floor(rd.median, wr.median, w.median, w.min, fl.median)?);
    }
    if let Some(se) = &r.figures.search {
        v.push(search(se)?);
    }
    Ok(v)
}

fn run_times(valid: &[&Run], floor: Option<f64>) -> Result<Plot> {
    let walls: Vec<f64> = valid.iter().map(|r| r.wall_s).collect();
    let (lo, hi) = walls.iter().fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let bins = ((walls.len() as f64).sqrt().ceil() as usize).clamp(5, 20);
    let span = if hi > lo { hi - lo } else { lo.max(1e-3) * 0.1 };
    let (x0, x1) = (lo - span * 0.1, hi + span * 0.1);
    let width = (x1 - x0) / bins as f64;
    let mut counts = vec![0u32; bins];
    for w in &walls {
        counts[(((w - x0) / width) as usize).min(bins - 1)] += 1;
    }
    let ymax = f64::from(counts.iter().copied().max().unwrap_or(1)) * 1.6;
    let median = crate::stats::median(&walls).unwrap_or(lo);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(&root)
            .caption("Distribution of wall times", (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(x0..x1, 0.0..ymax)
            .map_err(err)?;
        c.configure_mesh()
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .x_desc("wall time, s (launch to exit)")
            .y_desc("runs")
            .draw()
            .map_err(err)?;
        c.draw_series(counts.iter().enumerate().map(|(i, &n)| {
            let a = x0 + i as f64 * width;
            Rectangle::new([(a, 0.0), (a + width * 0.95, f64::from(n))], RGBColor(31, 119, 180).mix(0.7).filled())
        }))
        .map_err(err)?
        .label("runs per bin")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], RGBColor(31, 119, 180).filled()));
        c.draw_series(LineSeries::new([(median, 0.0), (median, ymax)], BLACK.stroke_width(2)))
            .map_err(err)?
            .label(format!("median {median:.3} s"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.stroke_width(2)));
        if let Some(f) = floor.filter(|f| (x0..=x1).contains(f)) {
            c.draw_series(LineSeries::new([(f, 0.0), (f, ymax)], RED.stroke_width(2)))
                .map_err(err)?
                .label(format!("I/O floor {f:.3} s"))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED.stroke_width(2)));
        }
        c.configure_series_labels().label_font((FONT, 14)).border_style(BLACK).background_style(WHITE.mix(0.85)).draw().map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Plot { id: "plot-run-times", caption: format!("Wall times of the {} valid measured runs, {bins} bins.", walls.len()), svg })
}

fn phase_time(r: &Run, name: &str) -> f64 {
    r.xsort_stats.as_ref().map_or(0.0, |s| s.phases.iter().filter(|p| p.name == name).map(|p| p.elapsed_s).sum())
}

fn phases(valid: &[&Run]) -> Result<Plot> {
    let n = valid.len();
    let stacks: Vec<(Vec<f64>, f64)> = valid
        .iter()
        .map(|r| {
            let p: Vec<f64> = PHASES.iter().map(|(name, _)| phase_time(r, name)).collect();
            let other = (r.wall_s - p.iter().sum::<f64>()).max(0.0);
            (p.into_iter().chain([other]).collect(), r.wall_s)
        })
        .collect();
    // Headroom above the bars for the legend.
    let ymax = top(stacks.iter().map(|(p, w)| p.iter().sum::<f64>().max(*w)).fold(0.0, f64::max)) * 1.5;
    let labels: Vec<String> = valid.iter().map(|r| r.index.to_string()).collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(&root)
            .caption("Phases of each run", (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.5..n as f64 + 0.5, 0.0..ymax)
            .map_err(err)?;
        c.configure_mesh()
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .disable_x_mesh()
            .x_labels(n.min(25))
            .x_label_formatter(&|x: &f64| {
                let i = x.round();
                if (x - i).abs() < 0.01 && i >= 1.0 {
                    labels.get(i as usize - 1).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("run")
            .y_desc("seconds")
            .draw()
            .map_err(err)?;
        let colors: Vec<RGBColor> = PHASES.iter().map(|p| p.1).chain([GREY]).collect();
        let names: Vec<&str> = PHASES.iter().map(|p| p.0).chain(["other: launch, sort, sync, exit"]).collect();
        for k in 0..colors.len() {
            let color = colors[k];
            c.draw_series(stacks.iter().enumerate().map(|(i, (p, _))| {
                let x = i as f64 + 1.0;
                let base: f64 = p[..k].iter().sum();
                Rectangle::new([(x - 0.35, base), (x + 0.35, base + p[k])], color.filled())
            }))
            .map_err(err)?
            .label(names[k])
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        c.draw_series(stacks.iter().enumerate().map(|(i, (_, w))| {
            let x = i as f64 + 1.0;
            PathElement::new([(x - 0.45, *w), (x + 0.45, *w)], BLACK.stroke_width(2))
        }))
        .map_err(err)?
        .label("wall time")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.stroke_width(2)));
        c.configure_series_labels()
            .label_font((FONT, 14))
            .position(SeriesLabelPosition::UpperRight)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Plot {
        id: "plot-phases",
        caption: "Elapsed time of xsort's I/O phases per valid measured run (from its --stats-json), stacked; phases overlap in time, so a stack may pass the wall time (black bar); 'other' is the wall time the phases do not cover.".into(),
        svg,
    })
}

/// Throughput of each phase and CPU use over the representative run, one chart above the other.
fn timeline(run: &Run, r: &Report) -> Result<Plot> {
    let samples = run.xsort_stats.as_ref().map(|s| s.samples.clone()).unwrap_or_default();
    let (rates, cpu) = sample_steps(&samples, r.context.cpu.threads.max(1) as f64);
    let tmax = top(run.wall_s.max(samples.last().map_or(0.0, |s| s.t_s)) / 1.15 * 1.02);
    let rmax = top(rates.iter().flatten().map(|p| p.1).fold(0.0, f64::max)) * 1.3;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H * 2)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((2, 1));
        draw_throughput(&areas[0], run.index, tmax, rmax, &rates)?;
        draw_usage(&areas[1], tmax, cpu, r)?;
        root.present().map_err(err)?;
    }
    Ok(Plot {
        id: "plot-timeline",
        caption: format!(
            "Run {} (the valid run closest to the median): bytes per second of each phase and CPU use from xsort's samples, machine CPU and disk busy from /proc every 100 ms.",
            run.index
        ),
        svg,
    })
}

/// xsort's samples as step lines: MB/s of each of the [`PHASES`], and xsort's CPU use as a
/// percentage of `threads` logical CPUs. Intervals under 20 ms are skipped.
fn sample_steps(samples: &[Sample], threads: f64) -> (Vec<Points>, Points) {
    let mut rates: Vec<Points> = vec![Vec::new(); 4];
    let mut cpu = Vec::new();
    for w in samples.windows(2) {
        let dt = w[1].t_s - w[0].t_s;
        if dt < 0.02 {
            continue;
        }
        let (t0, t1) = (w[0].t_s, w[1].t_s);
        let d = |a: u64, b: u64| b.saturating_sub(a) as f64 / dt / 1e6;
        let values = [
            d(w[0].input_bytes, w[1].input_bytes),
            d(w[0].temp_write_bytes, w[1].temp_write_bytes),
            d(w[0].temp_read_bytes, w[1].temp_read_bytes),
            d(w[0].output_bytes, w[1].output_bytes),
        ];
        // Each value is held over its interval: a step line, not a slope between samples.
        for (series, v) in rates.iter_mut().zip(values) {
            series.extend([(t0, v), (t1, v)]);
        }
        let c = ((w[1].cpu_s - w[0].cpu_s) / dt / threads * 100.0).max(0.0);
        cpu.extend([(t0, c), (t1, c)]);
    }
    (rates, cpu)
}

/// The timeline's upper chart: MB/s of each phase that moved any bytes.
fn draw_throughput(area: &DrawingArea<SVGBackend, Shift>, run_index: usize, tmax: f64, rmax: f64, rates: &[Points]) -> Result<()> {
    let mut c = ChartBuilder::on(area)
        .caption(format!("Throughput during run {run_index} (xsort's own 100 ms samples)"), (FONT, 18))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..tmax, 0.0..rmax)
        .map_err(err)?;
    c.configure_mesh()
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .x_desc("seconds since xsort started")
        .y_desc("MB/s")
        .draw()
        .map_err(err)?;
    for (k, (name, color)) in PHASES.iter().enumerate() {
        if rates[k].iter().all(|p| p.1 == 0.0) {
            continue;
        }
        let color = *color;
        c.draw_series(LineSeries::new(rates[k].clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    c.configure_series_labels().label_font((FONT, 14)).border_style(BLACK).background_style(WHITE.mix(0.85)).draw().map_err(err)?;
    Ok(())
}

/// The timeline's lower chart: xsort's CPU use (`cpu`) beside the machine's CPU and disk busy.
fn draw_usage(area: &DrawingArea<SVGBackend, Shift>, tmax: f64, cpu: Points, r: &Report) -> Result<()> {
    let mut c = ChartBuilder::on(area)
        .caption("CPU and disk use during the same run", (FONT, 18))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..tmax, 0.0..140.0)
        .map_err(err)?;
    c.configure_mesh().label_style((FONT, 14)).axis_desc_style((FONT, 15)).x_desc("seconds").y_desc("% of capacity").draw().map_err(err)?;
    let lines: [Line; 3] = [
        ("xsort CPU, % of all logical CPUs", cpu, RGBColor(148, 103, 189)),
        ("machine CPU busy %", machine_steps(&r.representative_machine_series, |p| p.cpu_busy_pct), GREY),
        ("disk busy % (io_ticks)", machine_steps(&r.representative_machine_series, |p| p.disk_busy_pct), RGBColor(140, 86, 75)),
    ];
    for (name, pts, color) in lines {
        c.draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    c.configure_series_labels().label_font((FONT, 14)).border_style(BLACK).background_style(WHITE.mix(0.85)).draw().map_err(err)?;
    Ok(())
}

/// The monitor's 100 ms intervals as a step line of `f`.
fn machine_steps(points: &[crate::monitor::Point], f: impl Fn(&crate::monitor::Point) -> f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    let mut t0 = 0.0;
    for p in points {
        out.extend([(t0, f(p)), (p.t_s, f(p))]);
        t0 = p.t_s;
    }
    out
}

fn floor(read: f64, write: f64, median: f64, min: f64, floor_median: f64) -> Result<Plot> {
    // An empty slot on the right holds the legend.
    let ymax = top((read + write).max(median));
    let labels = ["I/O floor", "xsort median", "xsort best"];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(&root)
            .caption(format!("I/O floor beside xsort: median {:.2}x the floor", median / floor_median.max(1e-9)), (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.5..5.0, 0.0..ymax)
            .map_err(err)?;
        c.configure_mesh()
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .disable_x_mesh()
            .x_labels(9)
            .x_label_formatter(&|x: &f64| {
                let i = x.round();
                if (x - i).abs() < 0.01 && (1.0..=3.0).contains(&i) {
                    labels[i as usize - 1].to_string()
                } else {
                    String::new()
                }
            })
            .y_desc("seconds")
            .draw()
            .map_err(err)?;
        let bars: [(f64, f64, f64, RGBColor, &str); 4] = [
            (1.0, 0.0, read, PHASES[0].1, "floor: direct read of the input"),
            (1.0, read, read + write, PHASES[3].1, "floor: direct write + fsync"),
            (2.0, 0.0, median, RGBColor(60, 60, 60), "xsort wall time (launch included)"),
            (3.0, 0.0, min, RGBColor(120, 120, 120), "xsort best run"),
        ];
        for (x, a, b, color, name) in bars {
            c.draw_series([Rectangle::new([(x - 0.3, a), (x + 0.3, b)], color.filled())])
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        c.configure_series_labels().label_font((FONT, 14)).border_style(BLACK).background_style(WHITE.mix(0.85)).draw().map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Plot {
        id: "plot-floor",
        caption: format!("Medians over the valid measured runs: floor {floor_median:.3} s (read {read:.3} s + write {write:.3} s), xsort {median:.3} s (best {min:.3} s)."),
        svg,
    })
}

fn search(se: &crate::categories::Search) -> Result<Plot> {
    let xmax = top(se.steps.iter().map(|s| s.bytes as f64 / 1e6).fold(0.0, f64::max));
    let ymax = top(se.steps.iter().map(|s| s.wall_s).fold(se.limit_s, f64::max));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(&root)
            .caption("Search over sizes", (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..xmax, 0.0..ymax)
            .map_err(err)?;
        c.configure_mesh()
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .x_desc("input, MB")
            .y_desc("wall time, s")
            .draw()
            .map_err(err)?;
        c.draw_series(LineSeries::new([(0.0, se.limit_s), (xmax, se.limit_s)], RED.stroke_width(2)))
            .map_err(err)?
            .label(format!("limit {:.3} s", se.limit_s))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED.stroke_width(2)));
        let green = RGBColor(44, 160, 44);
        c.draw_series(se.steps.iter().filter(|s| s.within_limit).map(|s| Circle::new((s.bytes as f64 / 1e6, s.wall_s), 5, green.filled())))
            .map_err(err)?
            .label("within the limit")
            .legend(move |(x, y)| Circle::new((x + 6, y), 5, green.filled()));
        c.draw_series(
            se.steps.iter().filter(|s| !s.within_limit).map(|s| Cross::new((s.bytes as f64 / 1e6, s.wall_s), 6, RED.stroke_width(2))),
        )
        .map_err(err)?
        .label("over the limit or invalid")
        .legend(|(x, y)| Cross::new((x + 6, y), 6, RED.stroke_width(2)));
        c.configure_series_labels()
            .label_font((FONT, 14))
            .position(SeriesLabelPosition::UpperLeft)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Plot { id: "plot-search", caption: format!("One probe per size; cap {} ({}).", super::bytes(se.cap_bytes), se.cap_reason), svg })
}

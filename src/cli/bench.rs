//! Benchmark commands (used by benches/compare_helm.py):
//!
//! - `bench-render CHART [-f VALUES] [--iterations N]`: load + render +
//!   assemble the chart N times; prints JSON timings.
//! - `bench-templates DIR... [--iterations N]`: parse and render throughput
//!   over the templates of the charts (directories or .tgz) given.

use super::args::Args;
use crate::chart::manifest::sort_manifests;
use crate::chart::render::{render_chart, ReleaseOptions, RenderOptions};
use crate::gotmpl::exec::TemplateSet;
use std::path::Path;
use std::time::Instant;

fn iterations(a: &Args, default: usize) -> Result<usize, String> {
    match a.one(&["--iterations"]) {
        Some(n) => n.parse().map_err(|_| format!("invalid --iterations {n:?}")),
        None => Ok(default),
    }
}

pub fn render(a: &Args) -> Result<(), String> {
    let chart_path = a.positional.first().ok_or("bench-render needs a chart")?;
    let n = iterations(a, 50)?;
    let user = super::template::user_values(a)?;
    let opts = RenderOptions {
        release: ReleaseOptions {
            name: "rel".into(),
            namespace: "ns".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let data = std::fs::read(chart_path).map_err(|e| e.to_string())?;
    let mut times = Vec::with_capacity(n);
    let mut bytes = 0usize;
    let (mut t_load, mut t_render, mut t_sort) = (0.0, 0.0, 0.0);
    for _ in 0..n {
        let t0 = Instant::now();
        let chart = if Path::new(chart_path).is_dir() {
            crate::chart::load_chart(Path::new(chart_path)).map_err(|e| e.to_string())?
        } else {
            crate::chart::load::load_archive(&data).map_err(|e| e.to_string())?
        };
        let t1 = Instant::now();
        let r = render_chart(&chart, &user, &opts).map_err(|e| e.to_string())?;
        let t2 = Instant::now();
        let sorted = sort_manifests(r.files, r.chart.name()).map_err(|e| e.to_string())?;
        let t3 = Instant::now();
        t_load += (t1 - t0).as_secs_f64();
        t_render += (t2 - t1).as_secs_f64();
        t_sort += (t3 - t2).as_secs_f64();
        bytes = sorted.manifests.iter().map(|m| m.content.len()).sum();
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    if std::env::var("NAVIQUE_BENCH_PHASES").is_ok() {
        eprintln!(
            "load {:.3} ms, render {:.3} ms, assemble {:.3} ms",
            t_load * 1000.0 / n as f64,
            t_render * 1000.0 / n as f64,
            t_sort * 1000.0 / n as f64
        );
    }
    times.sort_by(|x, y| x.partial_cmp(y).unwrap());
    let mean = times.iter().sum::<f64>() / n as f64;
    println!(
        "{{\"iterations\":{n},\"mean_ms\":{mean:.4},\"median_ms\":{:.4},\"min_ms\":{:.4},\"manifest_bytes\":{bytes}}}",
        times[n / 2], times[0]
    );
    Ok(())
}

pub fn templates(a: &Args) -> Result<(), String> {
    let n = iterations(a, 20)?;
    let mut sources: Vec<(String, String)> = Vec::new();
    for p in &a.positional {
        let chart = crate::chart::load_chart(Path::new(p)).map_err(|e| e.to_string())?;
        collect(&chart, &mut sources);
    }
    // The largest templates dominate real renders; measure the top 20.
    sources.sort_by_key(|(_, t)| std::cmp::Reverse(t.len()));
    sources.truncate(20);
    let total: usize = sources.iter().map(|(_, t)| t.len()).sum();
    let t0 = Instant::now();
    for _ in 0..n {
        let mut set = TemplateSet::new();
        for (name, text) in &sources {
            set.parse(name, text).map_err(|e| e.helm_message())?;
        }
    }
    let parse_s = t0.elapsed().as_secs_f64() / n as f64;
    println!(
        "{{\"templates\":{},\"bytes\":{total},\"parse_ms\":{:.4},\"parse_mb_per_s\":{:.2}}}",
        sources.len(),
        parse_s * 1000.0,
        total as f64 / parse_s / 1e6
    );
    Ok(())
}

fn collect(c: &crate::chart::Chart, out: &mut Vec<(String, String)>) {
    for t in &c.templates {
        out.push((
            format!("{}/{}", c.name(), t.name),
            String::from_utf8_lossy(&t.data).into_owned(),
        ));
    }
    for d in &c.dependencies {
        collect(d, out);
    }
}

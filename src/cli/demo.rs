//! `navique-operator demo`: render the chart embedded in the binary, so a
//! new user sees the engine work with nothing else installed.

use crate::chart::load::load_files;
use crate::chart::manifest::{manifest_string, sort_manifests};
use crate::chart::render::{render_chart, ReleaseOptions, RenderOptions};
use crate::chart::File;

const FILES: &[(&str, &str)] = &[
    (
        "Chart.yaml",
        include_str!("../../examples/demo-chart/Chart.yaml"),
    ),
    (
        "values.yaml",
        include_str!("../../examples/demo-chart/values.yaml"),
    ),
    (
        "templates/_helpers.tpl",
        include_str!("../../examples/demo-chart/templates/_helpers.tpl"),
    ),
    (
        "templates/configmap.yaml",
        include_str!("../../examples/demo-chart/templates/configmap.yaml"),
    ),
    (
        "templates/deployment.yaml",
        include_str!("../../examples/demo-chart/templates/deployment.yaml"),
    ),
    (
        "templates/service.yaml",
        include_str!("../../examples/demo-chart/templates/service.yaml"),
    ),
];

pub fn run() -> Result<(), String> {
    let files = FILES
        .iter()
        .map(|(n, d)| File {
            name: n.to_string(),
            data: std::rc::Rc::new(d.as_bytes().to_vec()),
        })
        .collect();
    let chart = load_files(files).map_err(|e| e.0)?;
    let opts = RenderOptions {
        release: ReleaseOptions {
            name: "demo".into(),
            namespace: "navique-system".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let rendered = render_chart(&chart, &Default::default(), &opts).map_err(|e| e.0)?;
    let sorted = sort_manifests(&rendered.files, rendered.chart.name())?;
    println!("{}", manifest_string(&sorted.manifests).trim());
    Ok(())
}

//! `navique-operator demo-releases`: render the chart embedded in the binary, then
//! install, upgrade and uninstall it as a Helm release on the embedded
//! Kubernetes API server, so a new user sees the whole path work with
//! nothing else installed.

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

fn demo_chart() -> Result<crate::chart::Chart, String> {
    let files = FILES
        .iter()
        .map(|(n, d)| File {
            name: n.to_string(),
            data: d.as_bytes().into(),
        })
        .collect();
    load_files(files).map_err(|e| e.to_string())
}

pub fn run() -> Result<(), String> {
    let chart = demo_chart()?;
    let opts = RenderOptions {
        release: ReleaseOptions {
            name: "demo".into(),
            namespace: "navique-system".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut rendered =
        render_chart(&chart, &Default::default(), &opts).map_err(|e| e.to_string())?;
    let sorted = sort_manifests(std::mem::take(&mut rendered.files), rendered.chart.name())
        .map_err(|e| e.to_string())?;
    println!("# 1. `helm template` on our own engine:");
    println!("{}", manifest_string(&sorted.manifests).trim());
    println!();
    release_on_embedded_server(&chart)
}

/// Install, upgrade, roll back and uninstall the chart as a real Helm
/// release on an in-process API server (simulated controllers make the
/// Deployment Ready).
fn release_on_embedded_server(chart: &crate::chart::Chart) -> Result<(), String> {
    use crate::action::{self, Context};
    use crate::value::{Map, Value};
    let sandbox = navique_sandbox::Sandbox::start(navique_sandbox::Options {
        ready_delay: std::time::Duration::from_millis(300),
        ..Default::default()
    })
    .map_err(|e| format!("starting the embedded API server: {e}"))?;
    println!(
        "# 2. a Helm release on the embedded Kubernetes API server at {}",
        sandbox.url()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let kubeconfig = sandbox.kubeconfig_path().to_path_buf();
    let result = rt.block_on(async {
        let client = crate::apply::client::connect(Some(&kubeconfig), None)
            .await
            .map_err(|e| e.to_string())?;
        let mut ctx = Context::new(client, "default");
        ctx.wait = true;
        ctx.timeout = std::time::Duration::from_secs(30);
        let show = |r: &crate::release::Release| {
            println!(
                "   {} revision {}: {} ({}), chart {}-{}",
                r.name,
                r.version,
                r.info.status.as_str(),
                r.info.description,
                r.chart_name(),
                r.chart_version()
            )
        };
        println!("$ navique-operator install demo --wait");
        let r = action::install::install(&ctx, "demo", chart, &Map::new())
            .await
            .map_err(|e| e.to_string())?;
        show(&r);
        println!("$ navique-operator upgrade demo --set replicaCount=3 --wait");
        let mut values = Map::new();
        values.insert("replicaCount".into(), Value::Int(3));
        let r = action::upgrade::upgrade(&ctx, "demo", chart, &values, false)
            .await
            .map_err(|e| e.to_string())?;
        show(&r);
        println!("$ navique-operator rollback demo 1 --wait");
        let r = action::rollback::rollback(&ctx, "demo", 1)
            .await
            .map_err(|e| e.to_string())?;
        show(&r);
        println!("$ navique-operator history demo   (the Secrets `helm history` reads)");
        for h in ctx
            .storage
            .history("demo")
            .await
            .map_err(|e| e.to_string())?
        {
            println!(
                "   {}  {:<11} {}",
                h.version,
                h.info.status.as_str(),
                h.info.description
            );
        }
        println!("$ navique-operator uninstall demo");
        action::uninstall::uninstall(&ctx, "demo", false)
            .await
            .map_err(|e| e.to_string())?;
        let left = ctx
            .storage
            .history("demo")
            .await
            .map_err(|e| e.to_string())?;
        println!("   uninstalled; {} release records left", left.len());
        Ok::<(), String>(())
    });
    sandbox.stop();
    result
}

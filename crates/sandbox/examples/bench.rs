//! Requests per second and memory of the `navique-sandbox` server process.
//!
//! cargo build --release -p navique-sandbox --bins --examples
//! target/release/examples/bench [OBJECTS] [CLIENTS]

use futures_util::TryStreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn rss_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn client(kubeconfig: &std::path::Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(cfg).unwrap()
}

async fn parallel<F, Fut>(clients: &[kube::Client], total: usize, f: F) -> Duration
where
    F: Fn(kube::Client, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let started = Instant::now();
    let per = total / clients.len();
    let mut tasks = Vec::new();
    for (ci, c) in clients.iter().enumerate() {
        let (c, f) = (c.clone(), f.clone());
        tasks.push(tokio::spawn(async move {
            for i in ci * per..(ci + 1) * per {
                f(c.clone(), i).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    started.elapsed()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let objects: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let nclients: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(8);
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("navique-sandbox");
    let dir = std::env::temp_dir().join(format!("navique-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let child = Command::new(&bin)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--no-simulate")
        .spawn()
        .expect("navique-sandbox binary (build it with --release)");
    let server = Server(child);
    let pid = server.0.id();
    while !kubeconfig.exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let idle = rss_kib(pid, "VmRSS:");
    let mut clients = Vec::new();
    for _ in 0..nclients {
        clients.push(client(&kubeconfig).await);
    }
    let ns = "bench";
    Api::<Namespace>::all(clients[0].clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .unwrap();

    let create = parallel(&clients, objects, move |c, i| async move {
        let api: Api<ConfigMap> = Api::namespaced(c, ns);
        let cm: ConfigMap = serde_json::from_value(
            json!({"metadata": {"name": format!("cm-{i}"), "labels": {"idx": (i % 10).to_string()}},
            "data": {"payload": "x".repeat(200)}}),
        )
        .unwrap();
        api.create(&PostParams::default(), &cm).await.unwrap();
    })
    .await;
    let loaded = rss_kib(pid, "VmRSS:");

    let get = parallel(&clients, objects, move |c, i| async move {
        let api: Api<ConfigMap> = Api::namespaced(c, ns);
        api.get(&format!("cm-{i}")).await.unwrap();
    })
    .await;

    let apply = parallel(&clients, objects, move |c, i| async move {
        let api: Api<ConfigMap> = Api::namespaced(c, ns);
        let doc = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")}, "data": {"applied": "yes"}});
        api.patch(&format!("cm-{i}"), &PatchParams::apply("bench"), &Patch::Apply(doc)).await.unwrap();
    })
    .await;

    let lists = 20usize;
    let list_started = Instant::now();
    for _ in 0..lists {
        let api: Api<ConfigMap> = Api::namespaced(clients[0].clone(), ns);
        let l = api.list(&ListParams::default()).await.unwrap();
        assert_eq!(l.items.len(), objects);
    }
    let list = list_started.elapsed();

    // Watch fan-out: every watcher receives every update.
    let api: Api<ConfigMap> = Api::namespaced(clients[0].clone(), ns);
    let rv = api
        .list(&ListParams::default().limit(1))
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut watchers = Vec::new();
    for c in &clients {
        let api: Api<ConfigMap> = Api::namespaced(c.clone(), ns);
        let rv = rv.clone();
        watchers.push(tokio::spawn(async move {
            let mut s = Box::pin(
                api.watch(&WatchParams::default().timeout(120), &rv)
                    .await
                    .unwrap(),
            );
            let mut n = 0;
            while let Some(e) = s.try_next().await.unwrap() {
                if let WatchEvent::Modified(_) = e {
                    n += 1;
                    if n == objects {
                        break;
                    }
                }
            }
        }));
    }
    let watch_started = Instant::now();
    parallel(&clients, objects, move |c, i| async move {
        let api: Api<ConfigMap> = Api::namespaced(c, ns);
        api.patch(
            &format!("cm-{i}"),
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"n": "1"}})),
        )
        .await
        .unwrap();
    })
    .await;
    for w in watchers {
        w.await.unwrap();
    }
    let watch = watch_started.elapsed();
    let peak = rss_kib(pid, "VmHWM:");

    let rate = |n: usize, d: Duration| n as f64 / d.as_secs_f64();
    println!("| operation ({objects} ConfigMaps, {nclients} kube-rs clients) | rate |");
    println!("|---|---|");
    println!("| create (POST) | {:.0} req/s |", rate(objects, create));
    println!("| get | {:.0} req/s |", rate(objects, get));
    println!(
        "| server-side apply (PATCH apply-patch+yaml) | {:.0} req/s |",
        rate(objects, apply)
    );
    println!(
        "| list of all {objects} objects | {:.1} lists/s |",
        rate(lists, list)
    );
    println!("| merge patch while {nclients} watchers stream | {:.0} updates/s, {:.0} events/s delivered |", rate(objects, watch), rate(objects * nclients, watch));
    println!();
    println!(
        "server RSS: {:.1} MiB idle, {:.1} MiB with {objects} objects, {:.1} MiB peak",
        idle as f64 / 1024.0,
        loaded as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

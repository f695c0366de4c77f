//! `navique-operator list -A` over many large release Secrets stays small:
//! it pages through their metadata and reads one body per release (the
//! newest revision), where reading every Secret whole costs the sum of
//! their sizes several times over. A regression past the bound fails here.

#[path = "support/cluster.rs"]
mod cluster;
use cluster::TestCluster;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use navique_ai_core_operator::release::{storage, Info, Release, Status};
use std::process::Command;

/// Peak RSS allowed to `list -A -a` here (the goal: under 100 MB
/// whatever the count); the records below hold about 70 MB.
const PEAK_RSS_BOUND_MB: f64 = 100.0;

fn release(name: &str, ns: &str, version: i64, status: Status, blob: &str) -> Release {
    Release {
        name: name.into(),
        info: Info {
            first_deployed: "2026-12-01T10:00:00Z".into(),
            last_deployed: format!("2026-12-01T10:{version:02}:00Z"),
            deleted: String::new(),
            description: "Install complete".into(),
            status,
            notes: String::new(),
        },
        chart: serde_json::json!({"metadata": {"name": "big", "version": "1.2.3", "appVersion": "9.9"}}),
        config: serde_json::json!({ "blob": blob }),
        manifest: format!(
            "---\n# Source: big/templates/cm.yaml\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
        ),
        hooks: vec![],
        version,
        namespace: ns.into(),
        labels: Default::default(),
        apply_method: "ssa".into(),
    }
}

/// Incompressible text, so each record is as large as a big chart's.
fn noise(bytes: usize, seed: u64) -> String {
    let mut x = seed | 1;
    (0..bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                    [(x % 64) as usize],
            )
        })
        .collect()
}

/// Runs a command and returns its stdout and its peak RSS in MB, measured
/// by a Python wrapper so that no other child of the test counts.
fn run_measured(args: &[&str]) -> (String, f64) {
    let wrapper = "import resource, subprocess, sys\n\
        out = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n\
        sys.stderr.write(out.stderr)\n\
        assert out.returncode == 0, out.returncode\n\
        sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + '\\n' + out.stdout)\n";
    let out = Command::new("python3")
        .args(["-c", wrapper])
        .args(args)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (rss, rest) = text.split_once('\n').unwrap();
    (
        rest.to_string(),
        rss.trim().parse::<f64>().unwrap() / 1024.0,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn list_all_namespaces_reads_one_body_per_release_and_stays_under_its_memory_bound() {
    let mut cluster = TestCluster::start();
    let namespaces = [
        cluster.namespace("list-scale"),
        cluster.namespace("list-scale"),
    ];
    let client = cluster.client().await;
    let ns_api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    for ns in &namespaces {
        let object = serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).unwrap();
        if ns_api.get_opt(ns).await.unwrap().is_none() {
            ns_api
                .create(&PostParams::default(), &object)
                .await
                .unwrap();
        }
    }
    // 120 releases: 40 with a superseded first revision under a deployed
    // second, 5 whose newest revision is pending, one failed; ~430 KB each.
    let mut expected = std::collections::BTreeMap::new();
    let mut records = 0;
    for i in 0..120u64 {
        let ns = &namespaces[(i % 2) as usize];
        let name = format!("rel-{i:03}");
        let blob = noise(320 * 1024, i + 1);
        let mut revisions = vec![(1, Status::Deployed)];
        if i < 40 {
            revisions = vec![(1, Status::Superseded), (2, Status::Deployed)];
        } else if i < 45 {
            revisions = vec![(1, Status::Deployed), (2, Status::PendingUpgrade)];
        } else if i == 45 {
            revisions = vec![(1, Status::Failed)];
        }
        let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
        for (version, status) in &revisions {
            let r = release(&name, ns, *version, *status, &blob);
            let secret = storage::secret_for(&r, true, &Default::default()).unwrap();
            secrets
                .create(&PostParams::default(), &secret)
                .await
                .unwrap();
            records += 1;
        }
        let (version, status) = revisions.last().unwrap();
        expected.insert((ns.clone(), name), (version.to_string(), status.as_str()));
    }
    // A release whose newest record is corrupt lists at the revision before.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespaces[0]);
    let good = release("rel-corrupt", &namespaces[0], 1, Status::Deployed, "x");
    secrets
        .create(
            &PostParams::default(),
            &storage::secret_for(&good, true, &Default::default()).unwrap(),
        )
        .await
        .unwrap();
    let mut bad = storage::secret_for(
        &release("rel-corrupt", &namespaces[0], 2, Status::Deployed, "x"),
        true,
        &Default::default(),
    )
    .unwrap();
    bad.data = Some(
        [(
            "release".to_string(),
            k8s_openapi::ByteString(b"not a release".to_vec()),
        )]
        .into(),
    );
    secrets.create(&PostParams::default(), &bad).await.unwrap();
    records += 2;
    expected.insert(
        (namespaces[0].clone(), "rel-corrupt".into()),
        ("1".to_string(), "deployed"),
    );
    assert_eq!(records, 167);

    let bin = env!("CARGO_BIN_EXE_navique-operator");
    let kubeconfig = cluster.kubeconfig.to_string_lossy().into_owned();
    let (out, peak_mb) = run_measured(&[
        bin,
        "list",
        "-A",
        "-a",
        "-o",
        "json",
        "--kubeconfig",
        &kubeconfig,
    ]);
    let listed: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let ours: Vec<&serde_json::Value> = listed
        .iter()
        .filter(|r| namespaces.contains(&r["namespace"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(ours.len(), expected.len(), "{out}");
    for r in &ours {
        let key = (
            r["namespace"].as_str().unwrap().to_string(),
            r["name"].as_str().unwrap().to_string(),
        );
        let (revision, status) = &expected[&key];
        assert_eq!(r["revision"], *revision, "{r}");
        assert_eq!(r["status"], *status, "{r}");
        assert_eq!(r["chart"], "big-1.2.3");
        assert_eq!(r["app_version"], "9.9");
    }
    eprintln!(
        "list -A -a over {records} records (~{} MB): peak RSS {peak_mb:.1} MB",
        records * 430 / 1024
    );
    assert!(
        peak_mb < PEAK_RSS_BOUND_MB,
        "list -A -a peaked at {peak_mb:.1} MB, over the {PEAK_RSS_BOUND_MB} MB bound"
    );

    // Without -a only deployed and failed newest revisions show: the five
    // pending ones are hidden, and not by an older deployed revision.
    let (out, _) = run_measured(&[bin, "list", "-A", "-o", "json", "--kubeconfig", &kubeconfig]);
    let listed: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let ours = listed
        .iter()
        .filter(|r| namespaces.contains(&r["namespace"].as_str().unwrap().to_string()))
        .count();
    assert_eq!(ours, 116);
}

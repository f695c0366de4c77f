//! Where the integration tests run: the embedded sandbox, or the real cluster
//! named by `NAVIQUE_TEST_KUBECONFIG`.
#![allow(dead_code)]

use navique_sandbox::{Options, Sandbox};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Cluster {
    pub kubeconfig: PathBuf,
    pub sandbox: Option<Sandbox>,
    cache_dir: PathBuf,
    /// On a real cluster, shared with other tests and later runs: the
    /// namespaces and CRDs there before the test, so that what it made is
    /// removed when it ends, failed or not (tests take turns meanwhile).
    before: Option<(Vec<String>, Vec<String>)>,
    _turn: Option<std::sync::MutexGuard<'static, ()>>,
}

static REAL_CLUSTER_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn names(kubeconfig: &Path, resource: &str) -> Vec<String> {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["get", resource, "-o", "name"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub fn cluster() -> Cluster {
    cluster_with(Options::default())
}

pub fn cluster_with(opts: Options) -> Cluster {
    let cache_dir = std::env::temp_dir().join(format!("navique-kubectl-cache-{}", unique("c")));
    match std::env::var("NAVIQUE_TEST_KUBECONFIG") {
        Ok(path) if !path.is_empty() => {
            let turn = REAL_CLUSTER_TURN.lock().unwrap_or_else(|e| e.into_inner());
            let kubeconfig = PathBuf::from(path);
            let before = (names(&kubeconfig, "namespaces"), names(&kubeconfig, "crd"));
            Cluster {
                kubeconfig,
                sandbox: None,
                cache_dir,
                before: Some(before),
                _turn: Some(turn),
            }
        }
        _ => {
            let sandbox = Sandbox::start(opts).expect("start sandbox");
            Cluster {
                kubeconfig: sandbox.kubeconfig_path().to_path_buf(),
                sandbox: Some(sandbox),
                cache_dir,
                before: None,
                _turn: None,
            }
        }
    }
}

pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{:08x}", rand::random::<u32>())
}

impl Cluster {
    pub fn is_sandbox(&self) -> bool {
        self.sandbox.is_some()
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_in(args, None)
    }

    pub fn kubectl_in(&self, args: &[&str], dir: Option<&Path>) -> Output {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache_dir)
            .args(args);
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        cmd.output().expect("kubectl is installed")
    }

    /// Runs kubectl and returns stdout, failing the test with stderr otherwise.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn apply_stdin(&self, args: &[&str], manifest: &str) -> Output {
        use std::io::Write;
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache_dir)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl is installed");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(manifest.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    pub async fn client(&self) -> kube::Client {
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("kubeconfig");
        let cfg =
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .expect("config");
        kube::Client::try_from(cfg).expect("client")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.cache_dir);
        let Some((namespaces, crds)) = &self.before else {
            return;
        };
        for (resource, before) in [("namespaces", namespaces), ("crd", crds)] {
            for name in names(&self.kubeconfig, resource) {
                if !before.contains(&name) {
                    let _ = Command::new("kubectl")
                        .arg("--kubeconfig")
                        .arg(&self.kubeconfig)
                        .args(["delete", &name, "--wait=false"])
                        .output();
                }
            }
        }
    }
}

/// `../shared`, required under CI.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if dir.join("charts").is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("../shared/charts is missing and CI=true: these tests need the shared charts");
    }
    eprintln!("skipping: ../shared/charts is missing");
    None
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

//! The cluster a test installs the operator itself onto: an embedded API
//! server of its own, or the shared cluster NAVIQUE_TEST_KUBECONFIG names.
//! Installing the operator brings fixed cluster-scoped names (its CRDs, its
//! ClusterRole and binding), so on a shared cluster such tests take turns,
//! start by clearing what an interrupted run left, and delete everything
//! they made when they end, failed or not.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

static TURN: Mutex<()> = Mutex::new(());

pub struct TestCluster {
    pub kubeconfig: PathBuf,
    pub real: bool,
    namespaces: Vec<String>,
    _sandbox: Option<navique_sandbox::Sandbox>,
    _turn: Option<std::sync::MutexGuard<'static, ()>>,
}

fn kubectl(kubeconfig: &PathBuf, args: &[&str]) -> bool {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

impl TestCluster {
    pub fn start() -> TestCluster {
        match std::env::var("NAVIQUE_TEST_KUBECONFIG") {
            Ok(p) if !p.is_empty() => {
                let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
                let c = TestCluster {
                    kubeconfig: PathBuf::from(p),
                    real: true,
                    namespaces: Vec::new(),
                    _sandbox: None,
                    _turn: Some(turn),
                };
                c.clear_operator_waiting(true);
                c
            }
            _ => {
                let sb = navique_sandbox::Sandbox::start(navique_sandbox::Options {
                    ready_delay: std::time::Duration::from_millis(50),
                    ..Default::default()
                })
                .expect("sandbox");
                TestCluster {
                    kubeconfig: sb.kubeconfig_path().to_path_buf(),
                    real: false,
                    namespaces: Vec::new(),
                    _sandbox: Some(sb),
                    _turn: None,
                }
            }
        }
    }

    /// A client of this cluster, from its kubeconfig.
    pub async fn client(&self) -> kube::Client {
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("kubeconfig config");
        kube::Client::try_from(cfg).expect("client")
    }

    /// A namespace for this test: `navique-system` on an embedded server of
    /// its own, a unique one on a shared cluster; deleted at the end.
    pub fn namespace(&mut self, prefix: &str) -> String {
        let ns = if self.real {
            format!("{prefix}-{}-{}", std::process::id(), self.namespaces.len())
        } else {
            prefix.to_string()
        };
        self.namespaces.push(ns.clone());
        ns
    }

    /// Deletes the operator's cluster-scoped objects (its CRDs with what is
    /// in them, its ClusterRole and binding) and `navique-system`.
    fn clear_operator(&self) {
        self.clear_operator_waiting(false)
    }

    fn clear_operator_waiting(&self, wait: bool) {
        let crds = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(["get", "crd", "-o", "name"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        for crd in crds.lines().filter(|l| l.ends_with(".core.navique.com")) {
            kubectl(
                &self.kubeconfig,
                &[
                    "delete",
                    crd,
                    "--ignore-not-found",
                    "--wait=true",
                    "--timeout=60s",
                ],
            );
        }
        kubectl(
            &self.kubeconfig,
            &[
                "delete",
                "clusterrolebinding",
                "navique-operator",
                "--ignore-not-found",
            ],
        );
        kubectl(
            &self.kubeconfig,
            &[
                "delete",
                "clusterrole",
                "navique-operator",
                "--ignore-not-found",
            ],
        );
        let wait = if wait { "--wait=true" } else { "--wait=false" };
        kubectl(
            &self.kubeconfig,
            &[
                "delete",
                "namespace",
                "navique-system",
                "--ignore-not-found",
                wait,
                "--timeout=120s",
            ],
        );
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        if self.real {
            for ns in &self.namespaces {
                kubectl(
                    &self.kubeconfig,
                    &[
                        "delete",
                        "namespace",
                        ns,
                        "--ignore-not-found",
                        "--wait=false",
                    ],
                );
            }
            self.clear_operator();
        }
    }
}

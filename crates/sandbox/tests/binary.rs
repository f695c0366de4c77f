//! The `navique-sandbox` binary: writes its kubeconfig once it serves, and
//! stops cleanly on SIGTERM.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn binary_serves_until_sigterm() {
    let dir =
        std::env::temp_dir().join(format!("navique-sandbox-bin-{:08x}", rand::random::<u32>()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_navique-sandbox"))
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--no-simulate")
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !kubeconfig.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "kubeconfig written"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args([
            "get",
            "namespace",
            "kube-system",
            "-o",
            "jsonpath={.status.phase}",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Active",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let status = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "stops on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "{exit:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn binary_refuses_missing_kubeconfig_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_navique-sandbox"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kubeconfig is required"));
}

//! kubectl against the cluster a test runs on: stdout, or None on failure
//! (clean-up on a shared cluster goes on past what is already gone).

use std::path::Path;
use std::process::Command;

pub fn kubectl(kubeconfig: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

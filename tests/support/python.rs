//! Real Helm (helm-python-sdk) driven by a Python script whose last output
//! is JSON: the script's stdout, decoded; a failing script fails the test
//! with its stderr.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};

pub fn json(script: &str, stdin: &str) -> serde_json::Value {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON from the script")
}

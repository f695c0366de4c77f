//! The operator's image as CI builds it (`make image`, buildah, FROM
//! scratch), pushed to a real registry and inspected there: non-root user,
//! entrypoint, no shell, the static binary that runs on its own, and every
//! bundled chart inside with its pinned digest.
//!
//! Needs the image in buildah's vfs storage (`make image`; .ci/run builds
//! it before the tests). Under CI its absence is a failure.

#[path = "support/python.rs"]
mod python;
#[path = "support/registry.rs"]
mod registry;

use registry::Registry;
use std::process::Command;

const IMAGE: &str = "localhost/navique-ai-core-operator:dev";

fn image_built() -> bool {
    let built = Command::new("buildah")
        .args([
            "--storage-driver",
            "vfs",
            "inspect",
            "--type",
            "image",
            IMAGE,
        ])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !built {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{IMAGE} is not in buildah's storage and CI=true (.ci/run runs `make image`)"
        );
        eprintln!("skipping: {IMAGE} not built (make image)");
    }
    built
}

#[test]
fn the_pushed_image_runs_as_non_root_from_scratch_with_the_pinned_charts() {
    if !image_built() || !registry::tools_present() {
        return;
    }
    let reg = Registry::start(None);
    let target = format!("{}/scigility/navique-ai-core-operator:dev", reg.addr);
    let push = Command::new("buildah")
        .args([
            "--storage-driver",
            "vfs",
            "push",
            "--tls-verify=false",
            IMAGE,
        ])
        .arg(format!("docker://{target}"))
        .output()
        .unwrap();
    assert!(
        push.status.success(),
        "{}",
        String::from_utf8_lossy(&push.stderr)
    );
    let work = std::env::temp_dir().join(format!("navique-image-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    // Read it back over the distribution API: manifest, config, layers.
    let script = format!(
        r#"
import json, urllib.request, tarfile, io, hashlib, os, stat
base = "http://{addr}/v2/scigility/navique-ai-core-operator"
accept = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"
m = json.load(urllib.request.urlopen(urllib.request.Request(base + "/manifests/dev", headers={{"Accept": accept}})))
config = json.load(urllib.request.urlopen(base + "/blobs/" + m["config"]["digest"]))
files = {{}}
for layer in m["layers"]:
    data = urllib.request.urlopen(base + "/blobs/" + layer["digest"]).read()
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        for member in t.getmembers():
            if member.isfile():
                content = t.extractfile(member).read()
                files["/" + member.name.lstrip("./")] = {{"sha256": hashlib.sha256(content).hexdigest(), "mode": member.mode, "uid": member.uid}}
                if member.name.lstrip("./") == "navique-operator":
                    path = os.path.join({work:?}, "navique-operator")
                    open(path, "wb").write(content)
                    os.chmod(path, 0o755)
print(json.dumps({{"config": config["config"], "files": files}}))
"#,
        addr = reg.addr,
        work = work.display().to_string()
    );
    let found = python::json(&script, "");
    let config = &found["config"];
    assert_eq!(config["User"], "65532:65532");
    assert_eq!(
        config["Entrypoint"],
        serde_json::json!(["/navique-operator", "run", "--charts-dir", "/charts"])
    );
    let files = found["files"].as_object().unwrap();
    assert!(
        !files.contains_key("/bin/sh") && !files.keys().any(|f| f.starts_with("/bin/")),
        "no shell: {:?}",
        files.keys()
    );
    let catalog = navique_ai_core_operator::operator::model::catalog::Catalog::built_in();
    let pins = navique_ai_core_operator::cli::charts::all_pins(&catalog);
    for (name, pin) in &pins {
        let file = format!("/charts/{}-{}.tgz", pin.chart, pin.version);
        assert_eq!(
            files.get(&file).map(|f| f["sha256"].clone()),
            Some(serde_json::json!(pin.sha256)),
            "{name}: {file}"
        );
    }
    let charts = files.keys().filter(|f| f.starts_with("/charts/")).count();
    assert_eq!(
        charts,
        pins.len(),
        "only the pinned charts: {:?}",
        files.keys()
    );
    // The binary alone, outside any image: static, it needs no loader or libc.
    let binary = work.join("navique-operator");
    let version = Command::new(&binary).arg("version").output().unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")));
    let elf = std::fs::read(&binary).unwrap();
    assert!(
        !elf.windows(b"/lib64/ld-linux".len())
            .any(|w| w == b"/lib64/ld-linux"),
        "no dynamic loader named"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

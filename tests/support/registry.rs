//! A real OCI registry for tests: Debian's `docker-registry` (CNCF
//! distribution) on 127.0.0.1, with its own storage directory, optionally
//! behind htpasswd; seeded by real Helm pushing the bundled charts
//! (`seed_registry.py`). Stopped and deleted when dropped.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

pub fn shared_charts() -> Option<PathBuf> {
    let p = Path::new(ROOT).join("../shared/charts");
    if p.join("cert-manager-v1.21.1.tgz").exists() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "../shared/charts is missing and CI=true"
    );
    eprintln!("skipping: ../shared/charts not found");
    None
}

/// `docker-registry` and real Helm are both needed; under CI their absence
/// is a failure (.ci/run installs them), elsewhere a skip.
pub fn tools_present() -> bool {
    let registry = Command::new("docker-registry")
        .arg("--version")
        .output()
        .is_ok();
    let helm = Command::new("python3")
        .args(["-c", "import helm_python"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if registry && helm {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "docker-registry (Debian package) and helm-python-sdk are required under CI"
    );
    eprintln!("skipping: docker-registry or helm_python missing");
    false
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Registry {
    pub addr: String,
    pub dir: PathBuf,
    /// The test CA's certificate, when the registry serves HTTPS.
    pub ca: Option<PathBuf>,
    child: Child,
}

pub struct Auth<'a> {
    pub user: &'a str,
    pub password: &'a str,
}

/// A test CA and a certificate it signed for 127.0.0.1 (openssl), in `dir`:
/// (ca.pem, cert.pem, key.pem).
fn test_certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=navique-test-ca",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "leaf.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    std::fs::write(
        dir.join("leaf.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "leaf.cnf",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    )
}

impl Registry {
    pub fn start(auth: Option<Auth>) -> Registry {
        Registry::start_with(auth, false)
    }

    /// HTTPS, with a certificate from a CA of the test's own.
    pub fn start_tls() -> Registry {
        Registry::start_with(None, true)
    }

    fn start_with(auth: Option<Auth>, tls: bool) -> Registry {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("navique-registry-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let auth_section = match auth {
            None => String::new(),
            Some(a) => {
                let out = Command::new("htpasswd")
                    .args(["-Bbn", a.user, a.password])
                    .output()
                    .expect("htpasswd (apache2-utils) runs");
                assert!(out.status.success());
                std::fs::write(dir.join("htpasswd"), out.stdout).unwrap();
                format!(
                    "auth:\n  htpasswd:\n    realm: navique-test\n    path: {}\n",
                    dir.join("htpasswd").display()
                )
            }
        };
        let (ca, tls_section) = if tls {
            let (ca, cert, key) = test_certificates(&dir);
            let section = format!(
                "  tls:\n    certificate: {}\n    key: {}\n",
                cert.display(),
                key.display()
            );
            (Some(ca), section)
        } else {
            (None, String::new())
        };
        let config = format!(
            "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: navique-test\n{tls_section}{auth_section}log:\n  level: error\n",
            dir.join("data").display()
        );
        std::fs::write(dir.join("config.yml"), config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.join("config.yml"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("registry.log")).unwrap())
            .spawn()
            .expect("docker-registry starts");
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry {
            addr,
            dir,
            ca,
            child,
        }
    }

    /// Real Helm pushes the bundled charts (or `only` those) and `extra`
    /// tarballs (`PATH=oci://upstream/repo`), under `<addr>/<upstream host>/...`.
    pub fn seed(&self, only: &[&str], extra: &[String]) {
        self.seed_with(only, extra, false)
    }

    /// Also the stand-in images of the catalog's [[image]] pins.
    pub fn seed_images(&self) {
        self.seed_with(&["none"], &[], true)
    }

    fn seed_with(&self, only: &[&str], extra: &[String], images: bool) {
        let mut cmd = Command::new("python3");
        cmd.arg(Path::new(ROOT).join("tests/support/seed_registry.py"))
            .arg(&self.addr);
        for o in only {
            cmd.args(["--only", o]);
        }
        for e in extra {
            cmd.args(["--extra", e]);
        }
        if images {
            cmd.arg("--images");
        }
        if let Some(ca) = &self.ca {
            // Go reads the trusted roots from SSL_CERT_FILE.
            cmd.arg("--tls").env("SSL_CERT_FILE", ca);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "seeding failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The `--registry-mirror` flags that send quay.io and ghcr.io here.
    pub fn mirror_flags(&self) -> Vec<String> {
        ["quay.io", "ghcr.io", "docker.io", "docker.langfuse.com"]
            .iter()
            .flat_map(|h| {
                [
                    "--registry-mirror".to_string(),
                    format!("{h}={}/{h}", self.addr),
                ]
            })
            .collect()
    }

    /// The blob file of a digest in the registry's storage.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.dir
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A server that answers every request with `status` (a registry in
/// trouble), on its own thread until the process ends.
pub fn answering(status: u16) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "{\"errors\":[{\"code\":\"UNKNOWN\",\"message\":\"the test registry is in trouble\"}]}";
            let _ = write!(
                stream,
                "HTTP/1.1 {status} Trouble\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

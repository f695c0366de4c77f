//! Registry credentials from a docker config file, as Helm reads them:
//! `auths.<host>.auth` (base64 `user:password`) or `username`/`password`.
//! Credential helpers (`credsStore`, `credHelpers`) run other programs, which
//! an air-gapped operator image does not have; a file that relies on one for
//! a host gets a clear error rather than an anonymous pull.

use base64::Engine;
use oci_client::secrets::RegistryAuth;
use std::path::{Path, PathBuf};

/// Why registry credentials could not be read; `file` is the docker
/// config file they came from.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{}:{}: {source}", .path.display(), .source.line(), .source.column())]
    NotJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{file}: credentials for {host} are kept by a credential helper, which this operator does not run; put them under auths.{host:?}")]
    CredentialHelper { file: String, host: String },
    #[error("{file}: auths.{host:?}.auth is not base64: {source}")]
    NotBase64 {
        file: String,
        host: String,
        #[source]
        source: base64::DecodeError,
    },
    #[error("{file}: auths.{host:?}.auth is not UTF-8")]
    NotUtf8 {
        file: String,
        host: String,
        #[source]
        source: std::string::FromUtf8Error,
    },
    #[error("{file}: auths.{host:?}.auth is not user:password")]
    NotUserPassword { file: String, host: String },
    #[error("{file}: auths.{host:?} has neither auth nor username and password")]
    NoSecret { file: String, host: String },
}

#[derive(Clone, Debug, Default)]
pub struct Credentials {
    pub file: Option<PathBuf>,
    auths: serde_json::Map<String, serde_json::Value>,
    helpers: Vec<String>,
}

impl Credentials {
    /// `--registry-config FILE`, else `$DOCKER_CONFIG/config.json`, else
    /// `~/.docker/config.json`; no file is no credentials.
    pub fn load(explicit: Option<&Path>) -> Result<Credentials, CredentialsError> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => match std::env::var_os("DOCKER_CONFIG") {
                Some(dir) => PathBuf::from(dir).join("config.json"),
                None => match std::env::var_os("HOME") {
                    Some(home) => PathBuf::from(home).join(".docker/config.json"),
                    None => return Ok(Credentials::default()),
                },
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
                return Ok(Credentials::default())
            }
            Err(source) => return Err(CredentialsError::Read { path, source }),
        };
        Credentials::parse(&text, &path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Credentials, CredentialsError> {
        let doc: serde_json::Value =
            serde_json::from_str(text).map_err(|source| CredentialsError::NotJson {
                path: path.to_path_buf(),
                source,
            })?;
        let auths = doc
            .get("auths")
            .and_then(|a| a.as_object())
            .cloned()
            .unwrap_or_default();
        let mut helpers: Vec<String> = doc
            .get("credHelpers")
            .and_then(|h| h.as_object())
            .map(|h| h.keys().cloned().collect())
            .unwrap_or_default();
        if doc.get("credsStore").is_some() {
            helpers.push("*".into());
        }
        Ok(Credentials {
            file: Some(path.to_path_buf()),
            auths,
            helpers,
        })
    }

    /// The credentials for one registry host (`auths` keys may carry a
    /// scheme or a `/v1/` suffix, as `docker login` writes them).
    pub fn for_host(&self, host: &str) -> Result<RegistryAuth, CredentialsError> {
        let entry = self.auths.iter().find_map(|(key, value)| {
            let key = key
                .trim_start_matches("https://")
                .trim_start_matches("http://");
            let key = key.split('/').next().unwrap_or_default();
            (key == host).then_some(value)
        });
        let file = || {
            self.file
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or_default()
        };
        let Some(entry) = entry else {
            if self.helpers.iter().any(|h| h == host || h == "*") {
                return Err(CredentialsError::CredentialHelper {
                    file: file(),
                    host: host.to_string(),
                });
            }
            return Ok(RegistryAuth::Anonymous);
        };
        if let Some(auth) = entry.get("auth").and_then(|a| a.as_str()) {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(auth.trim())
                .map_err(|source| CredentialsError::NotBase64 {
                    file: file(),
                    host: host.to_string(),
                    source,
                })?;
            let text = String::from_utf8(raw).map_err(|source| CredentialsError::NotUtf8 {
                file: file(),
                host: host.to_string(),
                source,
            })?;
            let (user, password) =
                text.split_once(':')
                    .ok_or_else(|| CredentialsError::NotUserPassword {
                        file: file(),
                        host: host.to_string(),
                    })?;
            return Ok(RegistryAuth::Basic(user.to_string(), password.to_string()));
        }
        match (
            entry.get("username").and_then(|u| u.as_str()),
            entry.get("password").and_then(|p| p.as_str()),
        ) {
            (Some(u), Some(p)) => Ok(RegistryAuth::Basic(u.to_string(), p.to_string())),
            _ => Err(CredentialsError::NoSecret {
                file: file(),
                host: host.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_entries_are_read_as_docker_login_writes_them() {
        let text = r#"{"auths": {
            "https://127.0.0.1:5000/v1/": {"auth": "bmF2aXF1ZTpzM2NyZXQ="},
            "ghcr.io": {"username": "u", "password": "p"},
            "bad.example": {"auth": "!!"}
        }, "credHelpers": {"gcr.io": "gcloud"}}"#;
        let c = Credentials::parse(text, Path::new("/x/config.json")).unwrap();
        assert!(matches!(c.for_host("127.0.0.1:5000").unwrap(),
            RegistryAuth::Basic(u, p) if u == "navique" && p == "s3cret"));
        assert!(matches!(c.for_host("ghcr.io").unwrap(), RegistryAuth::Basic(u, _) if u == "u"));
        assert!(matches!(
            c.for_host("quay.io").unwrap(),
            RegistryAuth::Anonymous
        ));
        assert!(c
            .for_host("bad.example")
            .unwrap_err()
            .to_string()
            .contains("not base64"));
        assert!(c
            .for_host("gcr.io")
            .unwrap_err()
            .to_string()
            .contains("credential helper"));
        let e = Credentials::parse("{\n  \"auths\": [", Path::new("/x/c.json"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/x/c.json:2:"), "{e}");
    }
}

//! Charts and images in OCI registries: pull a pinned chart and verify both
//! of its digests (the manifest's, which a tag or Renovate names, and the
//! tarball's, which the chart store checks), push a chart as Helm does,
//! resolve tags to digests for `charts lock`. Talks the distribution API
//! through `oci-client`; credentials come from a docker config file.

pub mod artifact;
pub mod auth;
pub mod images;
pub mod reference;

use oci_client::errors::OciDistributionError;
use oci_client::manifest::OciDescriptor;
use oci_client::secrets::RegistryAuth;
use oci_client::Reference;
pub use reference::{Mirrors, Repository};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Why a registry operation failed.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// What a registry served (or a local file held) is refused:
    /// which reference, and why.
    #[error("{0}")]
    Registry(String),
    /// A registry call failed, explained: which reference, what the
    /// registry said, and for a refusal which credentials were offered.
    #[error("{explained}")]
    Call {
        explained: String,
        #[source]
        source: OciDistributionError,
    },
    #[error("{0}")]
    Reference(#[from] reference::ReferenceError),
    #[error("{0}")]
    Credentials(#[from] auth::CredentialsError),
    /// The chart tarball to push does not load.
    #[error("{}: {source}", .path.display())]
    Chart {
        path: PathBuf,
        #[source]
        source: crate::chart::LoadError,
    },
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub mirrors: Mirrors,
    /// Talk plain HTTP to every registry (Helm's `--plain-http`).
    pub plain_http: bool,
    /// `--registry-config`; else the docker config of the environment.
    pub registry_config: Option<PathBuf>,
    /// `--ca-file`: PEM certificates trusted beside the system's, for a
    /// registry (a mirror, most often) with a private CA.
    pub ca_file: Option<PathBuf>,
}

/// What a chart version resolves to in a registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Where it was found (after the mirrors).
    pub repository: Repository,
    /// `sha256:...` of the manifest.
    pub digest: String,
    /// Hex SHA-256 of the chart tarball (the chart layer's digest).
    pub sha256: String,
    pub size: usize,
}

/// What a pull must find; a field left `None` is taken as found.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    pub digest: Option<String>,
    pub sha256: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    config: OciDescriptor,
    #[serde(default)]
    layers: Vec<OciDescriptor>,
}

pub struct Registry {
    client: oci_client::Client,
    credentials: auth::Credentials,
    options: Options,
}

pub fn sha256_digest(data: &[u8]) -> String {
    format!("sha256:{}", crate::digest::sha256_hex(data))
}

impl Registry {
    pub fn new(options: Options) -> Result<Registry, OciError> {
        // reqwest is built without a default TLS provider; ring is the one
        // kube already links.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let credentials =
            auth::Credentials::load(options.registry_config.as_deref()).map_err(OciError::from)?;
        let extra_root_certificates = match &options.ca_file {
            None => Vec::new(),
            Some(path) => vec![oci_client::client::Certificate {
                encoding: oci_client::client::CertificateEncoding::Pem,
                data: std::fs::read(path).map_err(|e| {
                    OciError::Registry(format!("--ca-file {}: {e}", path.display()))
                })?,
            }],
        };
        let config = oci_client::client::ClientConfig {
            extra_root_certificates,
            protocol: if options.plain_http {
                oci_client::client::ClientProtocol::Http
            } else {
                oci_client::client::ClientProtocol::Https
            },
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            user_agent: concat!("navique-operator/", env!("CARGO_PKG_VERSION")),
            ..Default::default()
        };
        Ok(Registry {
            client: oci_client::Client::new(config),
            credentials,
            options,
        })
    }

    fn auth(&self, host: &str) -> Result<RegistryAuth, OciError> {
        self.credentials.for_host(host).map_err(OciError::from)
    }

    /// A failed call explained: which reference, what the registry said,
    /// and for a refusal, which credentials were offered.
    fn explain(&self, what: &str, host: &str, e: OciDistributionError) -> OciError {
        let offered = || {
            match self.credentials.for_host(host) {
            Ok(RegistryAuth::Anonymous) => match &self.credentials.file {
                Some(f) => format!("no credentials for {host} in {}", f.display()),
                None => format!("no credentials for {host} (no docker config file; give one with --registry-config)"),
            },
            _ => format!(
                "with the credentials for {host} from {}",
                self.credentials.file.as_ref().map(|f| f.display().to_string()).unwrap_or_default()
            ),
        }
        };
        let said = match &e {
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => {
                format!(
                    "the registry refused access (401 Unauthorized), {}",
                    offered()
                )
            }
            OciDistributionError::ImageManifestNotFoundError(_) => "not found (404)".to_string(),
            OciDistributionError::RegistryError { envelope, .. } => {
                let codes: Vec<String> = envelope
                    .errors
                    .iter()
                    .map(|x| format!("{:?}: {}", x.code, x.message))
                    .collect();
                let unknown = envelope.errors.iter().any(|x| {
                    matches!(
                        x.code,
                        oci_client::errors::OciErrorCode::ManifestUnknown
                            | oci_client::errors::OciErrorCode::NameUnknown
                            | oci_client::errors::OciErrorCode::BlobUnknown
                    )
                });
                let denied = envelope.errors.iter().any(|x| {
                    matches!(
                        x.code,
                        oci_client::errors::OciErrorCode::Unauthorized
                            | oci_client::errors::OciErrorCode::Denied
                    )
                });
                if unknown {
                    format!("not found (404: {})", codes.join("; "))
                } else if denied {
                    format!(
                        "the registry refused access ({}), {}",
                        codes.join("; "),
                        offered()
                    )
                } else {
                    format!("the registry answered {}", codes.join("; "))
                }
            }
            OciDistributionError::ServerError { code, message, .. } => {
                if *code == 401 {
                    format!(
                        "the registry refused access (401 Unauthorized), {}",
                        offered()
                    )
                } else if *code == 404 {
                    "not found (404)".to_string()
                } else {
                    format!("the registry answered HTTP {code}: {}", message.trim())
                }
            }
            OciDistributionError::RequestError(r) => {
                let mut chain = r.to_string();
                let mut src = std::error::Error::source(r);
                while let Some(s) = src {
                    chain.push_str(": ");
                    chain.push_str(&s.to_string());
                    src = s.source();
                }
                if r.is_connect() || r.is_timeout() {
                    format!("cannot reach the registry at {host}: {chain}")
                } else {
                    chain
                }
            }
            OciDistributionError::DigestError(d) => format!("digest mismatch: {d}"),
            other => other.to_string(),
        };
        OciError::Call {
            explained: format!("{what}: {said}"),
            source: e,
        }
    }

    /// The manifest of `reference`, its digest checked against its bytes.
    async fn manifest(
        &self,
        repo: &Repository,
        reference: &Reference,
    ) -> Result<(Manifest, String), OciError> {
        let what = format!("oci://{}", reference.whole());
        let auth = self.auth(repo.host())?;
        let (raw, _) = self
            .client
            .pull_manifest_raw(reference, &auth, &[artifact::MANIFEST_MEDIA_TYPE])
            .await
            .map_err(|e| self.explain(&what, repo.host(), e))?;
        let digest = sha256_digest(&raw);
        if let Some(asked) = reference.digest() {
            if asked != digest {
                return Err(OciError::Registry(format!(
                    "{what}: the registry sent a manifest whose digest is {digest}; refusing it"
                )));
            }
        }
        let manifest: Manifest = serde_json::from_slice(&raw).map_err(|e| {
            OciError::Registry(format!(
                "{what}: the manifest is not an OCI image manifest: {e}"
            ))
        })?;
        if manifest.config.media_type != artifact::CONFIG_MEDIA_TYPE {
            return Err(OciError::Registry(format!(
                "{what}: not a Helm chart (config media type {:?}, expected {:?})",
                manifest.config.media_type,
                artifact::CONFIG_MEDIA_TYPE
            )));
        }
        Ok((manifest, digest))
    }

    fn chart_layer<'m>(what: &str, manifest: &'m Manifest) -> Result<&'m OciDescriptor, OciError> {
        let charts: Vec<&OciDescriptor> = manifest
            .layers
            .iter()
            .filter(|l| l.media_type == artifact::CHART_LAYER_MEDIA_TYPE)
            .collect();
        match charts.as_slice() {
            [one] => Ok(one),
            _ => Err(OciError::Registry(format!(
                "{what}: expected one layer of media type {:?}, found {}",
                artifact::CHART_LAYER_MEDIA_TYPE,
                charts.len()
            ))),
        }
    }

    /// Resolves a chart version by tag, through the mirrors.
    pub async fn resolve(
        &self,
        upstream: &Repository,
        version: &str,
    ) -> Result<Resolved, OciError> {
        let repo = self.options.mirrors.repository(upstream);
        let reference = repo.tagged(version).map_err(OciError::from)?;
        let (manifest, digest) = self.manifest(&repo, &reference).await?;
        let layer = Self::chart_layer(&format!("oci://{}", reference.whole()), &manifest)?;
        Ok(Resolved {
            sha256: layer.digest.trim_start_matches("sha256:").to_string(),
            size: layer.size as usize,
            repository: repo,
            digest,
        })
    }

    /// Pulls one chart version, by digest when `expect.digest` is given
    /// (else by tag), and refuses anything but what was expected: the
    /// manifest digest, the layer digest the manifest names, and the
    /// tarball's own SHA-256.
    pub async fn pull_chart(
        &self,
        upstream: &Repository,
        version: &str,
        expect: &Expect,
    ) -> Result<(Resolved, Vec<u8>), OciError> {
        let repo = self.options.mirrors.repository(upstream);
        let reference = match &expect.digest {
            Some(d) => repo.by_digest(d),
            None => repo.tagged(version),
        }
        .map_err(OciError::from)?;
        let what = format!("oci://{}", reference.whole());
        let (manifest, digest) = self.manifest(&repo, &reference).await?;
        let layer = Self::chart_layer(&what, &manifest)?;
        let layer_sha = layer.digest.trim_start_matches("sha256:").to_string();
        if let Some(want) = &expect.sha256 {
            if !want.eq_ignore_ascii_case(&layer_sha) {
                return Err(OciError::Registry(format!(
                    "{what}: the chart tarball's sha256 is {layer_sha} (manifest {digest}), the pin says {want}; refusing it (after a digest bump, `navique-operator charts lock` refreshes sha256)"
                )));
            }
        }
        let mut data = Vec::with_capacity(layer.size.max(0) as usize);
        self.client
            .pull_blob(&reference, layer, &mut data)
            .await
            .map_err(|e| {
                self.explain(
                    &format!("{what}: chart layer {}", layer.digest),
                    repo.host(),
                    e,
                )
            })?;
        let found = crate::digest::sha256_hex(&data);
        if found != layer_sha {
            return Err(OciError::Registry(format!(
                "{what}: the chart tarball's sha256 is {found}, the manifest says {layer_sha}; refusing it"
            )));
        }
        Ok((
            Resolved {
                repository: repo,
                digest,
                sha256: found,
                size: data.len(),
            },
            data,
        ))
    }

    /// Pushes a chart tarball to `repo` (the chart's own repository, as
    /// `oci://host/path/<name>`), as Helm's push does.
    pub async fn push_chart(
        &self,
        tarball: &Path,
        repo: &Repository,
    ) -> Result<Resolved, OciError> {
        let data = std::fs::read(tarball)
            .map_err(|e| OciError::Registry(format!("{}: {e}", tarball.display())))?;
        let chart = crate::chart::load::load_archive(&data).map_err(|source| OciError::Chart {
            path: tarball.to_path_buf(),
            source,
        })?;
        let meta = &chart.metadata;
        let mtime = std::fs::metadata(tarball)
            .and_then(|m| m.modified())
            .map_err(|e| OciError::Registry(format!("{}: {e}", tarball.display())))?;
        let config = artifact::config_json(meta).into_bytes();
        let config_desc = artifact::Descriptor {
            media_type: artifact::CONFIG_MEDIA_TYPE,
            digest: sha256_digest(&config),
            size: config.len(),
        };
        let layer_desc = artifact::Descriptor {
            media_type: artifact::CHART_LAYER_MEDIA_TYPE,
            digest: sha256_digest(&data),
            size: data.len(),
        };
        let annotations = artifact::annotations(meta, &artifact::created_from(mtime));
        let manifest =
            artifact::manifest_json(&config_desc, &layer_desc, &annotations).into_bytes();
        let digest = sha256_digest(&manifest);
        let reference = repo.tagged(&meta.version).map_err(OciError::from)?;
        let what = format!(
            "pushing {} to oci://{}",
            tarball.display(),
            reference.whole()
        );
        let auth = self.auth(repo.host())?;
        self.client
            .store_auth_if_needed(reference.resolve_registry(), &auth)
            .await;
        for (blob, desc) in [(&data, &layer_desc), (&config, &config_desc)] {
            self.client
                .push_blob(&reference, blob.clone(), &desc.digest)
                .await
                .map_err(|e| self.explain(&what, repo.host(), e))?;
        }
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            reqwest::header::HeaderValue::from_static(artifact::MANIFEST_MEDIA_TYPE),
        );
        self.client
            .push_manifest_raw(
                &reference,
                manifest,
                headers.get(reqwest::header::CONTENT_TYPE).cloned().unwrap(),
            )
            .await
            .map_err(|e| self.explain(&what, repo.host(), e))?;
        Ok(Resolved {
            repository: repo.clone(),
            digest,
            sha256: crate::digest::sha256_hex(&data),
            size: data.len(),
        })
    }

    /// The digest an image tag points at (for `charts lock`): the index's
    /// digest when the tag names a multi-platform image, as a pod pulls it.
    pub async fn image_digest(&self, image: &str) -> Result<String, OciError> {
        let mapped = self.options.mirrors.image(image);
        let reference: Reference = mapped
            .parse()
            .map_err(|e| OciError::Registry(format!("image {mapped:?}: {e}")))?;
        let host = reference.resolve_registry().to_string();
        let auth = self.auth(reference.registry())?;
        self.client
            .fetch_manifest_digest(&reference, &auth)
            .await
            .map_err(|e| self.explain(&format!("image {mapped}"), &host, e))
    }
}

/// Writes `data` as `dir/name` so that a reader sees the old file or the
/// whole new one, never part of it.
pub fn write_atomically(dir: &Path, name: &str, data: &[u8]) -> Result<PathBuf, OciError> {
    use std::io::Write;
    std::fs::create_dir_all(dir)
        .map_err(|e| OciError::Registry(format!("{}: {e}", dir.display())))?;
    let target = dir.join(name);
    let partial = dir.join(format!(".{name}.partial-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&partial)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&partial, &target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&partial);
        return Err(OciError::Registry(format!("{}: {e}", target.display())));
    }
    Ok(target)
}

//! A throwaway CA and a server certificate for 127.0.0.1/localhost.

use std::sync::Arc;

pub struct Tls {
    pub acceptor: tokio_rustls::TlsAcceptor,
    pub ca_pem: String,
}

pub fn generate() -> Result<Tls, String> {
    let err = |e: rcgen::Error| e.to_string();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "navique-sandbox-ca");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = rcgen::KeyPair::generate().map_err(err)?;
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).map_err(err)?;

    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(err)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "navique-sandbox");
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = rcgen::KeyPair::generate().map_err(err)?;
    let cert = params.signed_by(&key, &ca).map_err(err)?;

    let chain = vec![cert.der().clone(), ca.der().clone()];
    let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| e.to_string())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| e.to_string())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Tls {
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        ca_pem: ca.pem(),
    })
}

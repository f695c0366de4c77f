//! Sprig's key, certificate and password functions: genPrivateKey, genCA,
//! genSelfSignedCert, genSignedCert (and their WithKey forms),
//! buildCustomCert, encryptAES/decryptAES, bcrypt, htpasswd, derivePassword.
//! Certificates follow Sprig's templates: RSA 2048 keys, a random 128-bit
//! serial, server and client auth usages, CA certificates able to sign.

use super::{arg_int, arg_str, FResult, FuncError, Registry, P};
use crate::value::{Map, Object, Value};
use base64::Engine as _;
use rand::rngs::OsRng;
use rand::RngCore;
use std::rc::Rc;
use std::str::FromStr;
use std::time::Duration;

/// Sprig's `certificate` struct: PEM text of a certificate and its key.
#[derive(Debug, Clone)]
pub struct Certificate {
    pub cert: String,
    pub key: String,
}

impl Object for Certificate {
    fn type_name(&self) -> String {
        "sprig.certificate".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::str(&self.cert)),
            "Key" => Some(Value::str(&self.key)),
            _ => None,
        }
    }
    fn format(&self) -> String {
        format!("{{{} {}}}", self.cert, self.key)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_data(&self) -> Value {
        let mut m = Map::new();
        m.insert("Cert".into(), Value::str(&self.cert));
        m.insert("Key".into(), Value::str(&self.key));
        Value::map(m)
    }
}

fn msg(e: impl std::fmt::Display) -> FuncError {
    FuncError::Msg(e.to_string())
}

/// A private key as Sprig's parsePrivateKeyPEM reads it.
enum Key {
    Rsa(rsa::RsaPrivateKey),
    Ec(p256::ecdsa::SigningKey),
    /// A `DSA PRIVATE KEY` (P, Q, G, Y, X, big-endian): Go reads it, but
    /// a *dsa.PrivateKey is no crypto.Signer and x509 has no DSA public
    /// keys, so no certificate can be made with it.
    Dsa([Vec<u8>; 5]),
}

/// Sprig's pemBlockForKey for a DSA key: a `DSA PRIVATE KEY` block holding
/// its DSAKeyFormat, SEQUENCE { INTEGER 0, P, Q, G, Y, X } (OpenSSL's
/// traditional DSA private key).
fn dsa_pem(parts: &[Vec<u8>; 5]) -> Result<String, FuncError> {
    use x509_cert::der::asn1::Uint;
    use x509_cert::der::Encode;
    let mut ints = vec![Uint::new(&[0]).map_err(msg)?];
    for p in parts {
        ints.push(Uint::new(p).map_err(msg)?);
    }
    let der = ints.to_der().map_err(msg)?;
    x509_cert::der::pem::encode_string("DSA PRIVATE KEY", x509_cert::der::pem::LineEnding::LF, &der)
        .map_err(msg)
}

/// Sprig reads a `DSA PRIVATE KEY` with asn1.Unmarshal into DSAKeyFormat.
fn parse_dsa(pem_text: &str) -> Result<Key, FuncError> {
    use x509_cert::der::asn1::Int;
    use x509_cert::der::Decode;
    let fail = |e: String| msg(format!("parsing DSA private key from PEM: asn1: {e}"));
    let (_, der) = x509_cert::der::pem::decode_vec(pem_text.as_bytes())
        .map_err(|e| msg(format!("no PEM data in input: {e}")))?;
    let ints: Vec<Int> = Vec::from_der(&der).map_err(|e| fail(e.to_string()))?;
    if ints.len() < 6 {
        return Err(fail("syntax error: sequence truncated".into()));
    }
    let b = |i: usize| ints[i].as_bytes().to_vec();
    Ok(Key::Dsa([b(1), b(2), b(3), b(4), b(5)]))
}

impl Key {
    fn pem(&self) -> Result<String, FuncError> {
        use p256::pkcs8::LineEnding;
        match self {
            Key::Rsa(k) => {
                use rsa::pkcs1::EncodeRsaPrivateKey;
                Ok(k.to_pkcs1_pem(LineEnding::LF).map_err(msg)?.to_string())
            }
            Key::Ec(k) => {
                use p256::elliptic_curve::SecretKey;
                let sk: SecretKey<p256::NistP256> = k.into();
                Ok(sk.to_sec1_pem(LineEnding::LF).map_err(msg)?.to_string())
            }
            Key::Dsa(parts) => dsa_pem(parts),
        }
    }
}

fn rsa_key(bits: usize) -> Result<rsa::RsaPrivateKey, FuncError> {
    rsa::RsaPrivateKey::new(&mut OsRng, bits)
        .map_err(|e| msg(format!("error generating RSA key: {e}")))
}

/// Sprig's parsePrivateKeyPEM.
fn parse_key(pem_text: &str) -> Result<Key, FuncError> {
    let start = pem_text
        .find("-----BEGIN ")
        .ok_or_else(|| msg("no PEM data in input"))?;
    let label_end = pem_text[start + 11..]
        .find("-----")
        .ok_or_else(|| msg("no PEM data in input"))?;
    let label = &pem_text[start + 11..start + 11 + label_end];
    match label {
        "PRIVATE KEY" => {
            use p256::pkcs8::DecodePrivateKey;
            if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_pem(&pem_text[start..]) {
                return Ok(Key::Rsa(k));
            }
            if let Ok(k) = p256::ecdsa::SigningKey::from_pkcs8_pem(&pem_text[start..]) {
                return Ok(Key::Ec(k));
            }
            Err(msg("decoding PEM as PKCS#8: unsupported key type"))
        }
        "RSA PRIVATE KEY" => {
            use rsa::pkcs1::DecodeRsaPrivateKey;
            rsa::RsaPrivateKey::from_pkcs1_pem(&pem_text[start..])
                .map(Key::Rsa)
                .map_err(|e| msg(format!("decoding PEM as PKCS#1: {e}")))
        }
        "EC PRIVATE KEY" => {
            let sk = p256::SecretKey::from_sec1_pem(&pem_text[start..])
                .map_err(|e| msg(format!("decoding PEM as EC: {e}")))?;
            Ok(Key::Ec(sk.into()))
        }
        "DSA PRIVATE KEY" => parse_dsa(&pem_text[start..]),
        l if l.ends_with(" PRIVATE KEY") => Err(msg(format!("invalid private key type {l}"))),
        l => Err(msg(format!("no private key data in PEM block of type {l}"))),
    }
}

fn names_list(v: &Value, what: &str) -> Result<Vec<String>, FuncError> {
    match v {
        Value::Nil => Ok(Vec::new()),
        Value::List(l, _) => l
            .iter()
            .map(|x| match x {
                Value::Str(s) => Ok(s.to_string()),
                other => Err(msg(format!(
                    "error processing {what}: {} is not a string",
                    crate::gotmpl::format::format_v(other)
                ))),
            })
            .collect(),
        _ => Ok(Vec::new()),
    }
}

struct Template {
    cn: String,
    ips: Vec<std::net::IpAddr>,
    dns: Vec<String>,
    days: i64,
    is_ca: bool,
}

/// The issuer of a certificate being made: its subject name, its key and
/// its Subject Key Identifier, if it has one.
type Issuer<'a> = (&'a x509_cert::name::Name, &'a Key, Option<Vec<u8>>);

/// A certificate's Subject Key Identifier extension value.
fn subject_key_id(cert: &x509_cert::Certificate) -> Option<Vec<u8>> {
    use x509_cert::der::Decode;
    use x509_cert::ext::pkix::SubjectKeyIdentifier;
    cert.tbs_certificate
        .extensions
        .as_ref()?
        .iter()
        .find(|e| e.extn_id == x509_cert::der::oid::db::rfc5280::ID_CE_SUBJECT_KEY_IDENTIFIER)
        .and_then(|e| SubjectKeyIdentifier::from_der(e.extn_value.as_bytes()).ok())
        .map(|s| s.0.as_bytes().to_vec())
}

fn cert_pem(t: &Template, subject_key: &Key, issuer: Option<Issuer>) -> Result<String, FuncError> {
    use x509_cert::builder::{Builder, CertificateBuilder, Profile};
    use x509_cert::der::asn1::{Ia5String, OctetString};
    use x509_cert::der::EncodePem;
    use x509_cert::ext::pkix::name::GeneralName;
    use x509_cert::ext::pkix::{
        BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages, SubjectAltName,
    };
    use x509_cert::name::Name;
    use x509_cert::serial_number::SerialNumber;
    use x509_cert::spki::SubjectPublicKeyInfoOwned;
    use x509_cert::time::Validity;

    let mut serial = [0u8; 16];
    OsRng.fill_bytes(&mut serial);
    serial[0] &= 0x7f;
    if serial[0] == 0 {
        serial[0] = 1;
    }
    let serial = SerialNumber::new(&serial).map_err(msg)?;
    let days = t.days.max(0) as u64;
    let validity = Validity::from_now(Duration::from_secs(days * 86400)).map_err(msg)?;
    let cn =
        t.cn.replace('\\', "\\\\")
            .replace(',', "\\,")
            .replace('+', "\\+")
            .replace('=', "\\=");
    let subject = if t.cn.is_empty() {
        Name::default()
    } else {
        Name::from_str(&format!("CN={cn}")).map_err(msg)?
    };
    // x509.CreateCertificate's first checks: the signing key is a
    // crypto.Signer, then the subject's public key has a type it encodes.
    let signer_key = issuer.as_ref().map(|(_, k, _)| *k).unwrap_or(subject_key);
    if matches!(signer_key, Key::Dsa(_)) {
        return Err(msg(
            "error creating certificate: x509: certificate private key does not implement crypto.Signer",
        ));
    }
    let spki = match subject_key {
        Key::Rsa(k) => SubjectPublicKeyInfoOwned::from_key(k.to_public_key()).map_err(msg)?,
        Key::Ec(k) => SubjectPublicKeyInfoOwned::from_key(*k.verifying_key()).map_err(msg)?,
        Key::Dsa(_) => {
            return Err(msg(
                "error creating certificate: x509: unsupported public key type: *dsa.PublicKey",
            ))
        }
    };
    // Go's x509.CreateCertificate: a CA gets a Subject Key Identifier, the
    // first 160 bits of the SHA-256 of its public key's bits; a certificate
    // whose issuer is another certificate with one gets it as its
    // Authority Key Identifier.
    let ski = t.is_ca.then(|| {
        use sha2::Digest;
        sha2::Sha256::digest(spki.subject_public_key.raw_bytes())[..20].to_vec()
    });
    let aki = match &issuer {
        Some((name, _, Some(id))) if **name != subject => Some(id.clone()),
        _ => None,
    };
    let profile = Profile::Manual {
        issuer: issuer.as_ref().map(|(n, _, _)| (*n).clone()),
    };
    let mut usages = KeyUsages::KeyEncipherment | KeyUsages::DigitalSignature;
    if t.is_ca {
        usages |= KeyUsages::KeyCertSign;
    }
    let mut sans = Vec::new();
    for d in &t.dns {
        sans.push(GeneralName::DnsName(Ia5String::new(d).map_err(msg)?));
    }
    for ip in &t.ips {
        let bytes = match ip {
            std::net::IpAddr::V4(v) => v.octets().to_vec(),
            std::net::IpAddr::V6(v) => v.octets().to_vec(),
        };
        sans.push(GeneralName::IpAddress(
            OctetString::new(bytes).map_err(msg)?,
        ));
    }
    macro_rules! build {
        ($signer:expr, $sig:ty) => {{
            let mut b = CertificateBuilder::new(profile, serial, validity, subject, spki, $signer)
                .map_err(msg)?;
            b.add_extension(&KeyUsage(usages)).map_err(msg)?;
            b.add_extension(&NonCritical(ExtendedKeyUsage(vec![
                x509_cert::der::oid::db::rfc5280::ID_KP_SERVER_AUTH,
                x509_cert::der::oid::db::rfc5280::ID_KP_CLIENT_AUTH,
            ])))
            .map_err(msg)?;
            b.add_extension(&BasicConstraints {
                ca: t.is_ca,
                path_len_constraint: None,
            })
            .map_err(msg)?;
            if let Some(id) = &ski {
                b.add_extension(&x509_cert::ext::pkix::SubjectKeyIdentifier(
                    OctetString::new(id.clone()).map_err(msg)?,
                ))
                .map_err(msg)?;
            }
            if let Some(id) = &aki {
                b.add_extension(&x509_cert::ext::pkix::AuthorityKeyIdentifier {
                    key_identifier: Some(OctetString::new(id.clone()).map_err(msg)?),
                    authority_cert_issuer: None,
                    authority_cert_serial_number: None,
                })
                .map_err(msg)?;
            }
            if !sans.is_empty() {
                b.add_extension(&SubjectAltName(sans)).map_err(msg)?;
            }
            let cert = b.build::<$sig>().map_err(msg)?;
            cert.to_pem(x509_cert::der::pem::LineEnding::LF)
                .map_err(msg)?
        }};
    }
    let pem = match signer_key {
        Key::Rsa(k) => {
            let signer = rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(k.clone());
            build!(&signer, rsa::pkcs1v15::Signature)
        }
        Key::Ec(k) => build!(k, p256::ecdsa::DerSignature),
        Key::Dsa(_) => unreachable!("refused above"),
    };
    Ok(pem)
}

/// Go marks extended key usage non-critical; x509-cert would mark it critical.
struct NonCritical<T>(T);

impl<T: x509_cert::der::oid::AssociatedOid> x509_cert::der::oid::AssociatedOid for NonCritical<T> {
    const OID: x509_cert::der::oid::ObjectIdentifier = T::OID;
}

impl<T: x509_cert::der::Encode> x509_cert::der::Encode for NonCritical<T> {
    fn encoded_len(&self) -> x509_cert::der::Result<x509_cert::der::Length> {
        self.0.encoded_len()
    }
    fn encode(&self, w: &mut impl x509_cert::der::Writer) -> x509_cert::der::Result<()> {
        self.0.encode(w)
    }
}

impl<T: x509_cert::der::oid::AssociatedOid + x509_cert::der::Encode> x509_cert::ext::AsExtension
    for NonCritical<T>
{
    fn critical(
        &self,
        _subject: &x509_cert::name::Name,
        _extensions: &[x509_cert::ext::Extension],
    ) -> bool {
        false
    }
}

fn make_cert(t: Template, key: Option<&str>, ca: Option<&Certificate>) -> FResult {
    let key = match key {
        Some(pem) => parse_key(pem)?,
        None => Key::Rsa(rsa_key(2048)?),
    };
    let pem = match ca {
        None => cert_pem(&t, &key, None)?,
        Some(ca) => {
            use x509_cert::der::DecodePem;
            let ca_cert = x509_cert::Certificate::from_pem(ca.cert.as_bytes())
                .map_err(|e| msg(format!("unable to decode certificate: {e}")))?;
            let ca_key = parse_key(&ca.key).map_err(|e| match e {
                FuncError::Msg(m) => msg(format!("unable to decode private key: {m}")),
                other => other,
            })?;
            let ca_ski = subject_key_id(&ca_cert);
            cert_pem(
                &t,
                &key,
                Some((&ca_cert.tbs_certificate.subject, &ca_key, ca_ski)),
            )?
        }
    };
    Ok(Value::Object(Rc::new(Certificate {
        cert: pem,
        key: key.pem()?,
    })))
}

fn ips(v: &Value) -> Result<Vec<std::net::IpAddr>, FuncError> {
    names_list(v, "IPs")?
        .into_iter()
        .map(|s| {
            s.parse::<std::net::IpAddr>()
                .map_err(|_| msg(format!("error parsing ip: {s}")))
        })
        .collect()
}

fn ca_arg(v: &Value) -> Result<Certificate, FuncError> {
    match v {
        Value::Object(o) => o
            .as_any()
            .downcast_ref::<Certificate>()
            .cloned()
            .ok_or_else(|| {
                msg(format!(
                    "wrong type for value; expected sprig.certificate; got {}",
                    o.type_name()
                ))
            }),
        other => Err(msg(format!(
            "wrong type for value; expected sprig.certificate; got {}",
            other.type_name()
        ))),
    }
}

fn gen_private_key(typ: &str) -> Result<String, FuncError> {
    use p256::pkcs8::{EncodePrivateKey, LineEnding};
    Ok(match typ {
        "" | "rsa" => {
            use rsa::pkcs1::EncodeRsaPrivateKey;
            rsa_key(4096)?
                .to_pkcs1_pem(LineEnding::LF)
                .map_err(msg)?
                .to_string()
        }
        "ecdsa" => Key::Ec(p256::ecdsa::SigningKey::random(&mut OsRng)).pem()?,
        "ed25519" => {
            let k = ed25519_dalek::SigningKey::generate(&mut OsRng);
            k.to_pkcs8_pem(LineEnding::LF).map_err(msg)?.to_string()
        }
        "dsa" => {
            use dsa::{Components, KeySize, SigningKey};
            let comps = Components::generate(&mut OsRng, KeySize::DSA_2048_256);
            let k = SigningKey::generate(&mut OsRng, comps);
            let (vk, c) = (k.verifying_key(), k.verifying_key().components());
            dsa_pem(&[
                c.p().to_bytes_be(),
                c.q().to_bytes_be(),
                c.g().to_bytes_be(),
                vk.y().to_bytes_be(),
                k.x().to_bytes_be(),
            ])?
        }
        other => format!("Unknown type {other}"),
    })
}

const SEED: &str = "com.lyndir.masterpassword";

fn templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

fn template_chars(c: u8) -> &'static [u8] {
    match c {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        b'x' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
        _ => b"",
    }
}

/// The Master Password algorithm as Sprig implements it.
pub fn derive_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    use hmac::Mac;
    let Some(tpls) = templates(kind) else {
        return format!("cannot find password template {kind}");
    };
    let mut salt = SEED.as_bytes().to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let params = scrypt::Params::new(15, 8, 2, 64).expect("valid scrypt parameters");
    if let Err(e) = scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key) {
        return format!("failed to derive password: {e}");
    }
    let mut input = SEED.as_bytes().to_vec();
    input.extend_from_slice(&(site.len() as u32).to_be_bytes());
    input.extend_from_slice(site.as_bytes());
    input.extend_from_slice(&counter.to_be_bytes());
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).expect("any key length");
    mac.update(&input);
    let seed = mac.finalize().into_bytes();
    let tpl = tpls[seed[0] as usize % tpls.len()].as_bytes();
    tpl.iter()
        .enumerate()
        .map(|(i, &c)| {
            let chars = template_chars(c);
            chars[seed[i + 1] as usize % chars.len()] as char
        })
        .collect()
}

fn bcrypt_hash(input: &str) -> Result<String, FuncError> {
    let parts = bcrypt::hash_with_result(input, 10).map_err(msg)?;
    Ok(parts.format_for_version(bcrypt::Version::TwoA))
}

fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let b = password.as_bytes();
    let n = b.len().min(32);
    key[..n].copy_from_slice(&b[..n]);
    key
}

fn encrypt_aes(password: &str, plaintext: &str) -> Result<String, FuncError> {
    use aes::cipher::{BlockEncryptMut, KeyIvInit};
    if plaintext.is_empty() {
        return Ok(String::new());
    }
    let mut iv = [0u8; 16];
    OsRng.fill_bytes(&mut iv);
    let enc = cbc::Encryptor::<aes::Aes256>::new(&aes_key(password).into(), &iv.into());
    let ct = enc.encrypt_padded_vec_mut::<aes::cipher::block_padding::Pkcs7>(plaintext.as_bytes());
    let mut out = iv.to_vec();
    out.extend_from_slice(&ct);
    Ok(base64::engine::general_purpose::STANDARD.encode(out))
}

fn decrypt_aes(password: &str, crypt64: &str) -> Result<String, FuncError> {
    use aes::cipher::{BlockDecryptMut, KeyIvInit};
    if crypt64.is_empty() {
        return Ok(String::new());
    }
    let data = super::strings::go_b64_decode(crypt64).map_err(msg)?;
    if data.len() < 16 || (data.len() - 16) % 16 != 0 || data.len() == 16 {
        return Err(msg("crypto/cipher: input not full blocks"));
    }
    let (iv, ct) = data.split_at(16);
    let dec = cbc::Decryptor::<aes::Aes256>::new(&aes_key(password).into(), iv.into());
    let mut buf = ct.to_vec();
    let plain = dec
        .decrypt_padded_mut::<aes::cipher::block_padding::NoPadding>(&mut buf)
        .map_err(msg)?
        .to_vec();
    let pad = *plain.last().unwrap_or(&0) as usize;
    if pad > plain.len() {
        return Err(msg("runtime error: slice bounds out of range"));
    }
    Ok(String::from_utf8_lossy(&plain[..plain.len() - pad]).into_owned())
}

/// The certificate template of the leaf functions' (cn, ips, dns, days) arguments.
fn leaf(a: &[Value]) -> Result<Template, FuncError> {
    Ok(Template {
        cn: arg_str(&a[0]).into(),
        ips: ips(&a[1])?,
        dns: names_list(&a[2], "DNS")?,
        days: arg_int(&a[3]),
        is_ca: false,
    })
}

/// genCA's template: common name and days from the first two arguments.
fn ca(a: &[Value]) -> Template {
    Template {
        cn: arg_str(&a[0]).into(),
        ips: vec![],
        dns: vec![],
        days: arg_int(&a[1]),
        is_ca: true,
    }
}

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("genPrivateKey", &[Str], None, |_, a| {
        Ok(Value::string(gen_private_key(arg_str(&a[0]))?))
    });
    r.add("genCA", &[Str, Int], None, |_, a| {
        make_cert(ca(&a), None, None)
    });
    r.add("genCAWithKey", &[Str, Int, Str], None, |_, a| {
        make_cert(ca(&a), Some(arg_str(&a[2])), None)
    });
    r.add(
        "genSelfSignedCert",
        &[Str, List, List, Int],
        None,
        |_, a| {
            let t = leaf(&a)?;
            make_cert(t, None, None)
        },
    );
    r.add(
        "genSelfSignedCertWithKey",
        &[Str, List, List, Int, Str],
        None,
        |_, a| {
            let t = leaf(&a)?;
            make_cert(t, Some(arg_str(&a[4])), None)
        },
    );
    r.add(
        "genSignedCert",
        &[Str, List, List, Int, Cert],
        None,
        |_, a| {
            let ca = ca_arg(&a[4])?;
            let t = leaf(&a)?;
            make_cert(t, None, Some(&ca))
        },
    );
    r.add(
        "genSignedCertWithKey",
        &[Str, List, List, Int, Cert, Str],
        None,
        |_, a| {
            let ca = ca_arg(&a[4])?;
            let t = leaf(&a)?;
            make_cert(t, Some(arg_str(&a[5])), Some(&ca))
        },
    );
    r.add("buildCustomCert", &[Str, Str], None, |_, a| {
        let cert = super::strings::go_b64_decode(arg_str(&a[0]))
            .map_err(|_| msg("unable to decode base64 certificate"))?;
        let key = super::strings::go_b64_decode(arg_str(&a[1]))
            .map_err(|_| msg("unable to decode base64 private key"))?;
        let cert = String::from_utf8_lossy(&cert).into_owned();
        let key = String::from_utf8_lossy(&key).into_owned();
        {
            use x509_cert::der::DecodePem;
            if !cert.contains("-----BEGIN ") {
                return Err(msg("unable to decode certificate"));
            }
            x509_cert::Certificate::from_pem(cert.as_bytes())
                .map_err(|e| msg(format!("error parsing certificate: decodedCert.Bytes: {e}")))?;
        }
        parse_key(&key).map_err(|e| match e {
            FuncError::Msg(m) => msg(format!("error parsing private key: {m}")),
            other => other,
        })?;
        Ok(Value::Object(Rc::new(Certificate { cert, key })))
    });
    r.add("encryptAES", &[Str, Str], None, |_, a| {
        Ok(Value::string(encrypt_aes(arg_str(&a[0]), arg_str(&a[1]))?))
    });
    r.add("decryptAES", &[Str, Str], None, |_, a| {
        Ok(Value::string(decrypt_aes(arg_str(&a[0]), arg_str(&a[1]))?))
    });
    r.add("bcrypt", &[Str], None, |_, a| {
        Ok(Value::string(bcrypt_hash(arg_str(&a[0]))?))
    });
    r.add("htpasswd", &[Str, Str], None, |_, a| {
        let user = arg_str(&a[0]);
        if user.contains(':') {
            return Ok(Value::string(format!("invalid username: {user}")));
        }
        Ok(Value::string(format!(
            "{user}:{}",
            bcrypt_hash(arg_str(&a[1]))?
        )))
    });
    r.add(
        "derivePassword",
        &[Uint32, Str, Str, Str, Str],
        None,
        |_, a| {
            let counter = match a[0] {
                Value::Uint32(u) => u,
                _ => arg_int(&a[0]) as u32,
            };
            Ok(Value::string(derive_password(
                counter,
                arg_str(&a[1]),
                arg_str(&a[2]),
                arg_str(&a[3]),
                arg_str(&a[4]),
            )))
        },
    );
}

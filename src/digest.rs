//! SHA-256 as every layer writes it (lower-case hex): chart archives, OCI
//! blobs and the inputs a release was made from.

use sha2::{Digest, Sha256};

pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

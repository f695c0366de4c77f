//! Sprig's random and cryptographic functions.

use super::{arg_int, FResult, Registry, P};
use crate::value::Value;
use base64::Engine as _;
use rand::Rng;

fn random_from(alphabet: &[u8], n: i64) -> FResult {
    if n < 0 {
        return Err(format!("Requested random string length {n} is less than 0.").into());
    }
    let mut rng = rand::thread_rng();
    Ok(Value::string(
        (0..n)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())] as char)
            .collect(),
    ))
}

const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const DIGITS: &[u8] = b"0123456789";

pub fn register(r: &mut Registry) {
    use P::*;
    r.add("randAlphaNum", &[Int], None, |_, a| {
        random_from(ALNUM, arg_int(&a[0]))
    });
    r.add("randAlpha", &[Int], None, |_, a| {
        random_from(ALPHA, arg_int(&a[0]))
    });
    r.add("randNumeric", &[Int], None, |_, a| {
        random_from(DIGITS, arg_int(&a[0]))
    });
    r.add("randAscii", &[Int], None, |_, a| {
        let printable: Vec<u8> = (32u8..=126).collect();
        random_from(&printable, arg_int(&a[0]))
    });
    r.add("randBytes", &[Int], None, |_, a| {
        let n = arg_int(&a[0]).max(0) as usize;
        let mut b = vec![0u8; n];
        rand::thread_rng().fill(&mut b[..]);
        Ok(Value::string(
            base64::engine::general_purpose::STANDARD.encode(b),
        ))
    });
    r.add("uuidv4", &[], None, |_, _| {
        let mut b = [0u8; 16];
        rand::thread_rng().fill(&mut b);
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = super::strings::hex(&b);
        Ok(Value::string(format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )))
    });
    super::pki::register(r);
}

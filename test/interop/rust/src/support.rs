//! Helpers shared by the checks: error details, timestamps, base58 and signing.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ed25519_dalek::{Signer, SigningKey};
use tonic::{Code, Status};
use tonic_types::{ErrorInfo, StatusExt};

/// Checks that `result` failed with `code` and, unless `reason` is empty, a `google.rpc.ErrorInfo`
/// in domain `solgate` with that reason (read with `StatusExt::get_details_error_info`).
pub fn expect_error<T: std::fmt::Debug>(result: Result<T, Status>, code: Code, reason: &str) -> Result<Option<ErrorInfo>, String> {
    let status = match result {
        Ok(value) => {
            let shown: String = format!("{value:?}").chars().take(300).collect();
            return Err(format!("call succeeded with {shown}, want {code:?}"));
        }
        Err(status) => status,
    };
    if status.code() != code {
        return Err(format!("code {:?} ({:?}), want {code:?}", status.code(), status.message()));
    }
    if reason.is_empty() {
        return Ok(None);
    }
    let info = status
        .get_details_error_info()
        .ok_or_else(|| format!("no google.rpc.ErrorInfo in {:?} {:?}", status.code(), status.message()))?;
    if info.reason != reason || info.domain != "solgate" {
        return Err(format!("ErrorInfo {}/{}, want solgate/{reason}", info.domain, info.reason));
    }
    Ok(Some(info))
}

/// The check for an RPC whose service has not landed yet.
/// TODO(interop): each caller goes once its service is in INTEROP_LANDED.
pub fn expect_unimplemented<T: std::fmt::Debug>(result: Result<T, Status>) -> Result<(), String> {
    expect_error(result, Code::Unimplemented, "").map(|_| ())
}

/// Checks that a timestamp is valid and within the last hour (not in the future).
pub fn recent(name: &str, ts: Option<&prost_types::Timestamp>) -> Result<(), String> {
    let ts = ts.ok_or_else(|| format!("{name} is absent"))?;
    if ts.nanos < 0 || ts.nanos >= 1_000_000_000 || ts.seconds <= 0 {
        return Err(format!("{name} = {ts:?} is not a valid timestamp"));
    }
    let at = UNIX_EPOCH + Duration::new(ts.seconds as u64, ts.nanos as u32);
    let now = SystemTime::now();
    if at + Duration::from_secs(3600) < now || at > now + Duration::from_secs(60) {
        return Err(format!("{name} = {ts:?} is not recent"));
    }
    Ok(())
}

/// Encodes bytes the way Solana writes addresses and signatures.
pub fn base58(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut digits: Vec<u8> = Vec::new(); // little-endian base-58 digits
    for &byte in bytes {
        let mut carry = byte as u32;
        for digit in digits.iter_mut() {
            carry += (*digit as u32) << 8;
            *digit = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    std::iter::repeat_n('1', zeros).chain(digits.iter().rev().map(|&d| ALPHABET[d as usize] as char)).collect()
}

/// The payer's address.
pub fn payer_address(seed: &[u8; 32]) -> String {
    base58(SigningKey::from_bytes(seed).verifying_key().as_bytes())
}

/// Signs a wire transaction whose first signer is the payer: skips the signature slots
/// (compact-u16 count, one byte below 128), signs the message, fills slot 0. Returns the
/// signed bytes and the signature.
pub fn sign_wire(wire: &[u8], seed: &[u8; 32]) -> Result<(Vec<u8>, [u8; 64]), String> {
    let count = *wire.first().ok_or("empty transaction")? as usize;
    let message_start = 1 + 64 * count;
    if count == 0 || count >= 128 || wire.len() <= message_start {
        return Err(format!("cannot sign a transaction with {count} signature slots"));
    }
    let signature = SigningKey::from_bytes(seed).sign(&wire[message_start..]).to_bytes();
    let mut signed = wire.to_vec();
    signed[1..65].copy_from_slice(&signature);
    Ok((signed, signature))
}

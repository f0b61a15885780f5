//! Transactions built and read here, byte by byte as the Go client does (test/interop/go/wire.go): a transfer
//! draft, a nonce account's creation, the nonce authority's own AdvanceNonceAccount, signing every signer's slot,
//! and reading a message's keys, blockhash and instructions.

use ed25519_dalek::{Signer, SigningKey};

use crate::support::base58;

const RECENT_BLOCKHASHES: &str = "SysvarRecentB1ockHashes11111111111111111111";
const RENT: &str = "SysvarRent111111111111111111111111111111111";
const COMPUTE_BUDGET: &str = "ComputeBudget111111111111111111111111111111";

/// Decodes an address, signature or blockhash.
pub fn decode_base58(text: &str) -> Result<Vec<u8>, String> {
    const ALPHABET: &str = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut bytes: Vec<u8> = Vec::new(); // little-endian base-256 digits
    for ch in text.chars() {
        let mut carry = ALPHABET.find(ch).ok_or_else(|| format!("{text:?} is not base58"))? as u32;
        for byte in bytes.iter_mut() {
            carry += (*byte as u32) * 58;
            *byte = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = text.chars().take_while(|&c| c == '1').count();
    Ok(std::iter::repeat_n(0u8, zeros).chain(bytes.into_iter().rev()).collect())
}

fn key(text: &str) -> Vec<u8> {
    decode_base58(text).expect("a valid constant address")
}

/// An unsigned legacy transfer from `from` to `to`; its blockhash is a placeholder the gateway replaces.
pub fn transfer_draft(from: &[u8], to: &[u8], lamports: u64) -> Vec<u8> {
    let mut msg = vec![1, 0, 1, 3];
    msg.extend_from_slice(from);
    msg.extend_from_slice(to);
    msg.extend_from_slice(&[0; 32]); // the System Program
    msg.extend_from_slice(&[0; 32]); // blockhash
    msg.extend_from_slice(&[1, 2, 2, 0, 1, 12]);
    msg.extend_from_slice(&2u32.to_le_bytes());
    msg.extend_from_slice(&lamports.to_le_bytes());
    [vec![1], vec![0; 64], msg].concat()
}

/// An unsigned legacy transaction that creates an 80-byte rent-exempt System account and initializes it as a
/// durable nonce whose authority is the payer.
pub fn nonce_account_draft(payer: &[u8], nonce: &[u8]) -> Vec<u8> {
    let mut msg = vec![2, 0, 3, 5];
    for k in [payer, nonce, &[0; 32], &key(RECENT_BLOCKHASHES), &key(RENT)] {
        msg.extend_from_slice(k);
    }
    msg.extend_from_slice(&[0; 32]);
    msg.push(2);
    msg.extend_from_slice(&[2, 2, 0, 1, 52]); // CreateAccount: lamports, space 80, owner the System Program
    msg.extend_from_slice(&0u32.to_le_bytes());
    msg.extend_from_slice(&1_447_680u64.to_le_bytes());
    msg.extend_from_slice(&80u64.to_le_bytes());
    msg.extend_from_slice(&[0; 32]);
    msg.extend_from_slice(&[2, 3, 1, 3, 4, 36]); // InitializeNonceAccount(authority)
    msg.extend_from_slice(&6u32.to_le_bytes());
    msg.extend_from_slice(payer);
    [vec![2], vec![0; 128], msg].concat()
}

/// The nonce authority's own AdvanceNonceAccount, as a durable-nonce transaction on the nonce's current value, at
/// `price` micro-lamports per CU. Returns the signed bytes and the signature.
pub fn advance_nonce_tx(authority: &SigningKey, account: &str, value: &str, price: u64) -> Result<(Vec<u8>, String), String> {
    let blockhash = decode_base58(value)?;
    if blockhash.len() != 32 {
        return Err(format!("nonce value {value:?}"));
    }
    let mut msg = vec![1, 0, 3, 5];
    for k in [authority.verifying_key().as_bytes().as_slice(), &decode_base58(account)?, &key(RECENT_BLOCKHASHES), &[0; 32], &key(COMPUTE_BUDGET)] {
        msg.extend_from_slice(k);
    }
    msg.extend_from_slice(&blockhash);
    msg.push(2);
    msg.extend_from_slice(&[3, 3, 1, 2, 0, 4]); // AdvanceNonceAccount: nonce, RecentBlockhashes, authority
    msg.extend_from_slice(&4u32.to_le_bytes());
    msg.extend_from_slice(&[4, 0, 9, 3]); // SetComputeUnitPrice
    msg.extend_from_slice(&price.to_le_bytes());
    let signature = authority.sign(&msg).to_bytes();
    Ok(([vec![1], signature.to_vec(), msg].concat(), base58(&signature)))
}

/// Signs a wire transaction (legacy or v0) with each key, in its signer's slot.
pub fn sign_all(wire: &[u8], keys: &[&SigningKey]) -> Result<Vec<u8>, String> {
    let count = *wire.first().ok_or("empty transaction")? as usize;
    let message = parse_message(wire)?;
    let body = &wire[1 + 64 * count..];
    let mut signed = wire.to_vec();
    for k in keys {
        let public = k.verifying_key().to_bytes();
        let slot = message.keys.iter().take(count).position(|key| key[..] == public[..]).ok_or_else(|| format!("{} is not a signer", base58(&public)))?;
        signed[1 + 64 * slot..1 + 64 * (slot + 1)].copy_from_slice(&k.sign(body).to_bytes());
    }
    Ok(signed)
}

/// One instruction of a message.
pub struct Instruction {
    pub program: usize,
    pub data: Vec<u8>,
}

/// What the checks read of a transaction's message.
pub struct Message {
    pub keys: Vec<Vec<u8>>,
    pub blockhash: Vec<u8>,
    pub instructions: Vec<Instruction>,
}

/// Reads a wire transaction's static keys, blockhash and instructions (legacy or v0, every length below 128).
pub fn parse_message(wire: &[u8]) -> Result<Message, String> {
    let short = || "transaction too short".to_string();
    let count = *wire.first().ok_or_else(short)? as usize;
    if count >= 0x80 {
        return Err("unexpected signature count".into());
    }
    let mut b = wire.get(1 + 64 * count..).ok_or_else(short)?;
    if b.first().is_some_and(|v| v & 0x80 != 0) {
        b = &b[1..];
    }
    let n = *b.get(3).ok_or_else(short)? as usize;
    b = &b[4..];
    if n >= 0x80 || b.len() < 32 * n + 33 {
        return Err(short());
    }
    let keys = (0..n).map(|i| b[32 * i..32 * (i + 1)].to_vec()).collect();
    let blockhash = b[32 * n..32 * n + 32].to_vec();
    b = &b[32 * n + 32..];
    let mut instructions = Vec::new();
    let total = b[0] as usize;
    b = &b[1..];
    for _ in 0..total {
        let program = *b.first().ok_or_else(short)? as usize;
        let accounts = *b.get(1).ok_or_else(short)? as usize;
        let len = *b.get(2 + accounts).ok_or_else(short)? as usize;
        let data = b.get(3 + accounts..3 + accounts + len).ok_or_else(short)?.to_vec();
        b = &b[3 + accounts + len..];
        instructions.push(Instruction { program, data });
    }
    if instructions.is_empty() {
        return Err("no instructions".into());
    }
    Ok(Message { keys, blockhash, instructions })
}

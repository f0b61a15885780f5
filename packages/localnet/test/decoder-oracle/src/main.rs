//! The oracle for the localnet's jsonParsed output: agave 4.4.0's own account decoder
//! (`solana-account-decoder`), fed accounts as JSON lines on stdin
//! (`{"pubkey": base58, "owner": base58, "data": base64}`), answering one JSON line each: the
//! `{program, parsed, space}` agave would put under `data`, or null when agave cannot parse it.
//! A line `{"base64": text}` instead answers how agave's base64 decoding (the same crate and
//! engine as its `decode_and_deserialize`; base64 0.23 as agave 4.4's solana-rpc) refuses the text: `{"error": "<Debug of the error>"}`,
//! or `{"ok": <decoded length>}`.
//! A line `{"featureSet": true}` answers `{"featureSet": <u32>}`: the first 4 bytes (little-endian)
//! of `agave-feature-set`'s `ID`, which `solana-version` reports in getVersion.
//! A line `{"blsFromSeed": hex}` answers `{"blsPubkey": base58}`: the compressed BLS public key
//! solana-test-validator derives from the vote account keypair with that 32-byte ed25519 seed
//! (`BLSKeypair::derive_from_signer(keypair, BLS_KEYPAIR_DERIVE_SEED)`).
use {
    base64::{prelude::BASE64_STANDARD, Engine},
    serde_json::{json, Value},
    agave_votor_messages::consensus_message::BLS_KEYPAIR_DERIVE_SEED,
    solana_account_decoder::parse_account_data::parse_account_data_v3,
    solana_bls_signatures::keypair::Keypair as BlsKeypair,
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    std::{
        io::{self, BufRead, Write},
        str::FromStr,
    },
};

fn answer(line: &str) -> Result<Value, String> {
    let input: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    if let Some(text) = input["base64"].as_str() {
        return Ok(match BASE64_STANDARD.decode(text) {
            Ok(bytes) => json!({ "ok": bytes.len() }),
            Err(e) => json!({ "error": format!("{e:?}") }),
        });
    }
    if input["featureSet"].as_bool() == Some(true) {
        let id = agave_feature_set::ID.as_ref()[..4].try_into().map_err(|_| "short id")?;
        return Ok(json!({ "featureSet": u32::from_le_bytes(id) }));
    }
    if let Some(hex) = input["blsFromSeed"].as_str() {
        let seed: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("zz"), 16).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let seed: [u8; 32] = seed.try_into().map_err(|_| "seed must be 32 bytes")?;
        let keypair = Keypair::new_from_array(seed);
        let bls = BlsKeypair::derive_from_signer(&keypair, BLS_KEYPAIR_DERIVE_SEED)
            .map_err(|e| e.to_string())?;
        return Ok(json!({ "blsPubkey": bs58::encode(bls.public.to_bytes_compressed()).into_string() }));
    }
    let field = |name: &str| input[name].as_str().ok_or(format!("missing {name}"));
    let pubkey = Pubkey::from_str(field("pubkey")?).map_err(|e| e.to_string())?;
    let owner = Pubkey::from_str(field("owner")?).map_err(|e| e.to_string())?;
    let data = BASE64_STANDARD.decode(field("data")?).map_err(|e| e.to_string())?;
    Ok(match parse_account_data_v3(&pubkey, &owner, &data, None) {
        Ok(parsed) => json!({ "program": parsed.program, "parsed": parsed.parsed, "space": parsed.space }),
        Err(_) => Value::Null,
    })
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        if line.trim().is_empty() {
            continue;
        }
        let value = answer(&line).unwrap_or_else(|e| json!({ "error": e }));
        writeln!(out, "{value}").expect("stdout");
    }
}

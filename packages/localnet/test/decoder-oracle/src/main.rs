//! The oracle for the localnet's jsonParsed output: agave 3.0.6's own account decoder
//! (`solana-account-decoder`), fed accounts as JSON lines on stdin
//! (`{"pubkey": base58, "owner": base58, "data": base64}`), answering one JSON line each: the
//! `{program, parsed, space}` agave would put under `data`, or null when agave cannot parse it.
//! A line `{"base64": text}` instead answers how agave's base64 decoding (the same crate and
//! engine as its `decode_and_deserialize`) refuses the text: `{"error": "<Debug of the error>"}`,
//! or `{"ok": <decoded length>}`.
use {
    base64::{prelude::BASE64_STANDARD, Engine},
    serde_json::{json, Value},
    solana_account_decoder::parse_account_data::parse_account_data_v3,
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

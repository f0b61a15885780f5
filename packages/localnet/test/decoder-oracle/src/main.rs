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
//! A line `{"zstd": base64, "offset"?: n, "length"?: n}` answers `{"zstd": base64}`: the data as
//! `encode_ui_account` encodes it for `base64+zstd` (with that data slice), agave's own frame bytes.
//! A line `{"genesisAccounts": true}` answers the native mint and the stake config account as
//! solana-runtime's `genesis_utils` builds them for solana-test-validator's genesis
//! (`{address: {lamports, owner, rentEpoch, data}}`, data in base64).
//! A line `{"epochSchedule": null | n}` answers the epoch schedule solana-test-validator sets:
//! `EpochSchedule::without_warmup()`, or `EpochSchedule::custom(n, n, false)` for `--slots-per-epoch n`.
//! A line `{"featureAccounts": true}` answers the feature accounts solana-test-validator's genesis
//! writes: `activate_feature` for every feature of `FeatureSet::all_enabled()` but alpenglow
//! (`{id: {lamports, owner, rentEpoch, data}}`).
//! A line `{"shredVersion": base58 hash}` answers `{"shredVersion": n}`: `compute_shred_version` of that
//! genesis hash with no hard forks (`Some(&HardForks::default())`, as the validator passes them).
use {
    base64::{prelude::BASE64_STANDARD, Engine},
    serde_json::{json, Value},
    agave_votor_messages::consensus_message::BLS_KEYPAIR_DERIVE_SEED,
    solana_account::Account,
    solana_account_decoder::{
        encode_ui_account, parse_account_data::parse_account_data_v3, UiAccountData,
        UiAccountEncoding, UiDataSliceConfig,
    },
    solana_rent::Rent,
    solana_bls_signatures::keypair::Keypair as BlsKeypair,
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    std::{
        io::{self, BufRead, Write},
        str::FromStr,
    },
};

/// The bytes of an account as JSON: lamports, owner, rent epoch and base64 data.
fn account_json(account: &Account) -> Value {
    json!({
        "lamports": account.lamports,
        "owner": account.owner.to_string(),
        "rentEpoch": account.rent_epoch,
        "data": BASE64_STANDARD.encode(&account.data),
    })
}

/// solana-runtime 4.4's `add_genesis_stake_config_account` and its native mint, with `Rent::default()`.
#[allow(deprecated)]
fn genesis_accounts() -> Result<Value, String> {
    let native_mint = Account {
        owner: spl_generic_token::token::id(),
        data: spl_generic_token::token::native_mint::ACCOUNT_DATA.to_vec(),
        lamports: 1_000_000_000,
        executable: false,
        rent_epoch: 1,
    };
    let mut data = bincode::serialize(&solana_config_interface::state::ConfigKeys { keys: vec![] })
        .map_err(|e| e.to_string())?;
    data.extend_from_slice(
        &bincode::serialize(&solana_stake_interface::config::Config::default()).map_err(|e| e.to_string())?,
    );
    let lamports = std::cmp::max(Rent::default().minimum_balance(data.len()), 1);
    let stake_config = Account {
        lamports,
        data,
        owner: solana_config_interface::id(),
        ..Account::default()
    };
    Ok(json!({
        spl_generic_token::token::native_mint::id().to_string(): account_json(&native_mint),
        solana_stake_interface::config::id().to_string(): account_json(&stake_config),
    }))
}

fn answer(line: &str) -> Result<Value, String> {
    let input: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    if let Some(text) = input["base64"].as_str() {
        return Ok(match BASE64_STANDARD.decode(text) {
            Ok(bytes) => json!({ "ok": bytes.len() }),
            Err(e) => json!({ "error": format!("{e:?}") }),
        });
    }
    if let Some(text) = input["zstd"].as_str() {
        let data = BASE64_STANDARD.decode(text).map_err(|e| e.to_string())?;
        let slice = input["offset"].as_u64().map(|offset| UiDataSliceConfig {
            offset: offset as usize,
            length: input["length"].as_u64().unwrap_or(u64::MAX) as usize,
        });
        let account = Account { lamports: 1, data, ..Account::default() };
        let ui = encode_ui_account(&Pubkey::default(), &account, UiAccountEncoding::Base64Zstd, None, slice);
        return match ui.data {
            UiAccountData::Binary(text, UiAccountEncoding::Base64Zstd) => Ok(json!({ "zstd": text })),
            _ => Err("not encoded as base64+zstd".into()),
        };
    }
    if input["featureAccounts"].as_bool() == Some(true) {
        let mut out = serde_json::Map::new();
        for id in agave_feature_set::FeatureSet::all_enabled().active().keys() {
            if *id == agave_feature_set::alpenglow::id() {
                continue;
            }
            let lamports = std::cmp::max(
                Rent::default().minimum_balance(solana_feature_gate_interface::Feature::size_of()),
                1,
            );
            let shared = solana_feature_gate_interface::create_account(
                &solana_feature_gate_interface::Feature { activated_at: Some(0) },
                lamports,
            );
            out.insert(id.to_string(), account_json(&Account::from(shared)));
        }
        return Ok(Value::Object(out));
    }
    if let Some(text) = input["shredVersion"].as_str() {
        let hash = solana_hash::Hash::from_str(text).map_err(|e| e.to_string())?;
        let hard_forks = solana_hard_forks::HardForks::default();
        let version = solana_shred_version::compute_shred_version(&hash, Some(&hard_forks));
        return Ok(json!({ "shredVersion": version }));
    }
    if let Some(value) = input.get("epochSchedule") {
        let schedule = match value.as_u64() {
            Some(n) => solana_epoch_schedule::EpochSchedule::custom(n, n, false),
            None => solana_epoch_schedule::EpochSchedule::without_warmup(),
        };
        return Ok(json!({
            "slotsPerEpoch": schedule.slots_per_epoch,
            "leaderScheduleSlotOffset": schedule.leader_schedule_slot_offset,
            "warmup": schedule.warmup,
            "firstNormalEpoch": schedule.first_normal_epoch,
            "firstNormalSlot": schedule.first_normal_slot,
        }));
    }
    if input["genesisAccounts"].as_bool() == Some(true) {
        return genesis_accounts();
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

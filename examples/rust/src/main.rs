//! A SOL transfer through Solgate with the `solgate-proto` crate (tonic + prost): sign with a keypair
//! file, estimate the fee, prepare the transaction (compute budget, priority fee, fresh blockhash),
//! sign it, send it without waiting, watch it to `finalized`, then list a page of a collection. Then the
//! same transfer as a fee ladder: create a durable nonce account, ask PrepareLadder for the transfer at
//! rising prices on that nonce (so at most one can land), sign every rung, send them with SendLadder and
//! watch the climb to its end with WatchLadder. `solgate-example feed` follows a collection's change feed
//! instead, resuming from a saved cursor (feed.rs).
//!
//!   SOLGATE_URL        the gateway, e.g. http://127.0.0.1:8080
//!   SOLGATE_API_KEY    an API key (`npm start` in the Solgate repository prints one)
//!   SOLGATE_KEYPAIR    a solana-keygen keypair file (the localnet's demo wallet: `npm start` prints its path)
//!   SOLGATE_COLLECTION a collection address (default: the localnet's seeded collection)
//!   SOLGATE_TO         who receives 0.001 SOL (default: a fixed address)

mod feed;

use std::error::Error;
use std::time::Instant;

use ed25519_dalek::{Signer, SigningKey};
use solgate_proto::pb::collection_service_client::CollectionServiceClient;
use solgate_proto::pb::fee_service_client::FeeServiceClient;
use solgate_proto::pb::transaction_service_client::TransactionServiceClient;
use solgate_proto::{ApiKey, pb};
use tonic_types::StatusExt;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // `solgate-example feed` follows a collection's change feed from a saved cursor instead (feed.rs).
    let outcome = if std::env::args().nth(1).as_deref() == Some("feed") {
        feed::run().await
    } else {
        run().await
    };
    if let Err(error) = outcome {
        // A gateway error carries its reason code (google.rpc.ErrorInfo) beside the gRPC status.
        let reason = error
            .downcast_ref::<tonic::Status>()
            .and_then(|s| s.get_details_error_info())
            .map(|i| i.reason);
        println!("failed: {} {error}", reason.unwrap_or_default());
        std::process::exit(1);
    }
}

async fn run() -> Result<()> {
    // The clients, sending the API key as `authorization: Bearer` with every call (gRPC over h2c).
    let channel = tonic::transport::Endpoint::from_shared(env("SOLGATE_URL", None)?)?
        .connect()
        .await?;
    let key = ApiKey::new(&env("SOLGATE_API_KEY", None)?)?;
    let mut fees = FeeServiceClient::with_interceptor(channel.clone(), key.clone());
    let mut transactions = TransactionServiceClient::with_interceptor(channel.clone(), key.clone());
    let mut collections = CollectionServiceClient::with_interceptor(channel, key);

    let payer = read_keypair(&env("SOLGATE_KEYPAIR", None)?)?;
    let from = payer.verifying_key().to_bytes();
    let to: [u8; 32] = bs58::decode(env(
        "SOLGATE_TO",
        Some("EphAJpvNtGG6ECKwjTW814jasV2kUvH9Aj8XmQGmd1FE"),
    )?)
    .into_vec()?
    .try_into()
    .map_err(|_| "SOLGATE_TO is not an address")?;
    let draft = transfer_draft(&from, &to, 1_000_000);
    println!(
        "draft: 0.001 SOL from {} to {}",
        bs58::encode(from).into_string(),
        bs58::encode(to).into_string()
    );

    let request = pb::EstimateFeesRequest {
        transaction: draft.clone(),
        ..Default::default()
    };
    let estimate = fees
        .estimate_fees(request)
        .await?
        .into_inner()
        .estimate
        .unwrap_or_default();
    let (priority, base) = (
        estimate.priority.unwrap_or_default(),
        estimate.base_fee.unwrap_or_default(),
    );
    println!(
        "fees: recommended {} micro-lamports/CU, base {} lamports",
        priority.recommended, base.lamports
    );

    let auto = pb::PriorityFee {
        choice: Some(pb::priority_fee::Choice::Level(
            pb::PriorityLevel::Auto.into(),
        )),
    };
    let request = pb::PrepareTransactionRequest {
        transaction: draft,
        priority_fee: Some(auto),
        ..Default::default()
    };
    let prepared = transactions
        .prepare_transaction(request)
        .await?
        .into_inner();
    let fee = prepared.expected_fee.unwrap_or_default().lamports;
    println!(
        "prepared: {} CU at {} micro-lamports/CU, fee {fee} lamports",
        prepared.compute_unit_limit, prepared.compute_unit_price
    );

    let (signed, signature) = sign(prepared.transaction, &payer)?;
    let started = Instant::now();
    let request = pb::SendTransactionRequest {
        transaction: signed,
        confirm: Some(false),
        ..Default::default()
    };
    let sent = transactions
        .send_transaction(request)
        .await?
        .into_inner()
        .result
        .unwrap_or_default();
    println!("sent: {signature} {}", sent.status().as_str_name());

    let request = pb::WatchStatusRequest {
        signature: signature.clone(),
        ..Default::default()
    };
    let mut stream = transactions.watch_status(request).await?.into_inner();
    let mut last = pb::TransactionStatus::Unspecified;
    while let Some(message) = stream.message().await? {
        let Some(pb::watch_status_response::Event::Record(record)) = message.event else {
            continue;
        }; // a heartbeat
        if record.status() == last {
            continue;
        }
        last = record.status();
        println!(
            "status: {} at slot {}",
            last.as_str_name(),
            record.slot.unwrap_or_default()
        );
        if !matches!(
            last,
            pb::TransactionStatus::Submitted | pb::TransactionStatus::Confirmed
        ) {
            break;
        }
    }
    if last != pb::TransactionStatus::Finalized {
        return Err(format!("the transfer ended {}", last.as_str_name()).into());
    }
    let seconds = started.elapsed().as_secs_f64();

    let address = env(
        "SOLGATE_COLLECTION",
        Some("8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ"),
    )?;
    let request = pb::ListCollectionNftsRequest {
        address,
        limit: 5,
        ..Default::default()
    };
    let page = collections
        .list_collection_nfts(request)
        .await?
        .into_inner();
    let names: Vec<&str> = page.items.iter().map(|nft| nft.name.as_str()).collect();
    println!(
        "collection: {}; next cursor {}",
        names.join(", "),
        page.next_cursor.as_deref().unwrap_or("none")
    );
    println!(
        "done: finalized {signature} in {seconds:.1} s, {} collection items",
        page.items.len()
    );
    ladder(&mut transactions, &payer, &to).await
}

type Transactions = TransactionServiceClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, ApiKey>,
>;

/// Sends the same transfer as a fee ladder on a new durable nonce account.
async fn ladder(transactions: &mut Transactions, payer: &SigningKey, to: &[u8; 32]) -> Result<()> {
    let from = payer.verifying_key().to_bytes();
    // A nonce account whose authority is the payer, so the payer's signature on each rung also advances it.
    let nonce = new_key();
    let nonce_address = nonce.verifying_key().to_bytes();
    let request = pb::PrepareTransactionRequest {
        transaction: nonce_account_draft(&from, &nonce_address)?,
        ..Default::default()
    };
    let prepared = transactions
        .prepare_transaction(request)
        .await?
        .into_inner();
    let created = sign_all(prepared.transaction, &[payer, &nonce])?;
    // Sent and confirmed: the ladder needs the nonce account on chain.
    let request = pb::SendTransactionRequest {
        transaction: created,
        confirm: Some(true),
        ..Default::default()
    };
    transactions.send_transaction(request).await?;
    let nonce_account = bs58::encode(nonce_address).into_string();
    println!("nonce account: {nonce_account}");

    let request = pb::PrepareLadderRequest {
        transaction: transfer_draft(&from, to, 1_000_000),
        nonce_account,
        rungs: Some(3),
        deadline_slots: Some(20),
        ..Default::default()
    };
    let plan = transactions.prepare_ladder(request).await?.into_inner();
    // Every rung signed now: Solgate submits the cheapest and climbs only while the market refuses it.
    let mut rungs = Vec::with_capacity(plan.rungs.len());
    for (i, rung) in plan.rungs.into_iter().enumerate() {
        println!(
            "rung {i}: {} micro-lamports/CU, odds {:.2}, sent at slot {}",
            rung.price, rung.odds, rung.send_at_slot
        );
        rungs.push(sign(rung.transaction, payer)?.0);
    }
    let request = pb::SendLadderRequest {
        transactions: rungs,
        ..Default::default()
    };
    let mut record = transactions
        .send_ladder(request)
        .await?
        .into_inner()
        .ladder
        .ok_or("SendLadder answered no ladder")?;
    println!("ladder sent: {}", record.id);

    let request = pb::WatchLadderRequest {
        id: record.id.clone(),
        ..Default::default()
    };
    let mut stream = transactions.watch_ladder(request).await?.into_inner();
    let mut last = pb::LadderStatus::Unspecified;
    // The stream ends once the ladder is final.
    while let Some(message) = stream.message().await? {
        let Some(pb::watch_ladder_response::Event::Ladder(next)) = message.event else {
            continue;
        }; // a heartbeat
        if next.status() == last {
            continue;
        }
        last = next.status();
        record = next;
        println!("ladder status: {}", last.as_str_name());
    }
    if last != pb::LadderStatus::Finalized {
        return Err(format!("the ladder ended {}", last.as_str_name()).into());
    }
    println!(
        "ladder: finalized rung {} {} at slot {}, {} micro-lamports/CU, fee {} lamports, {} slots after the first submission",
        record.landed_rung.unwrap_or_default(),
        record.signature,
        record.slot.unwrap_or_default(),
        record.price_landed.unwrap_or_default(),
        record.fee_paid_lamports.unwrap_or_default(),
        record.slots_to_land.unwrap_or_default()
    );
    Ok(())
}

/// A fresh keypair for the nonce account, which signs only its own creation. Seeded from the standard
/// library's randomly keyed hasher, to keep the build small (a real program would use `rand`).
fn new_key() -> SigningKey {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    let mut seed = [0u8; 32];
    for (i, chunk) in seed.chunks_mut(8).enumerate() {
        let mut hasher = state.build_hasher();
        hasher.write_usize(i);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        chunk.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    SigningKey::from_bytes(&seed)
}

/// An unsigned legacy transaction that creates an 80-byte account owned by the System Program and
/// initializes it as a durable nonce account whose authority is the payer.
fn nonce_account_draft(payer: &[u8; 32], nonce: &[u8; 32]) -> Result<Vec<u8>> {
    let recent_blockhashes =
        bs58::decode("SysvarRecentB1ockHashes11111111111111111111").into_vec()?;
    let rent = bs58::decode("SysvarRent111111111111111111111111111111111").into_vec()?;
    let mut tx = vec![2]; // two signature slots (payer, nonce account)
    tx.extend([0; 128]); // empty until signed
    tx.extend([2, 0, 3, 5]); // 2 signers, 0 read-only signers, 3 read-only others; 5 keys
    tx.extend(payer);
    tx.extend(nonce);
    tx.extend([0; 32]); // the System Program
    tx.extend(recent_blockhashes);
    tx.extend(rent);
    tx.extend([0; 32]); // recent blockhash, replaced by PrepareTransaction
    tx.push(2); // 2 instructions
    // CreateAccount: payer and new account; lamports (the rent-exempt minimum of 80 bytes), space, owner.
    tx.extend([2, 2, 0, 1, 52]);
    tx.extend(0u32.to_le_bytes());
    tx.extend(1_447_680u64.to_le_bytes());
    tx.extend(80u64.to_le_bytes());
    tx.extend([0; 32]);
    // InitializeNonceAccount: the account, the RecentBlockhashes and Rent sysvars; the authority.
    tx.extend([2, 3, 1, 3, 4, 36]);
    tx.extend(6u32.to_le_bytes());
    tx.extend(payer);
    Ok(tx)
}

/// Signs a wire transaction with each key, in the signature slot of its public key among the
/// message's signers (PrepareTransaction may turn a legacy draft into a v0 message; both are read).
fn sign_all(mut wire: Vec<u8>, keys: &[&SigningKey]) -> Result<Vec<u8>> {
    let count = usize::from(*wire.first().ok_or("empty transaction")?);
    if count >= 0x80 {
        return Err("unexpected signature count".into());
    }
    let message = wire
        .get(1 + 64 * count..)
        .ok_or("truncated transaction")?
        .to_vec();
    // A versioned message: its prefix byte, then the same layout.
    let header = if message.first().is_some_and(|b| b & 0x80 != 0) {
        &message[1..]
    } else {
        &message[..]
    };
    if header.len() < 4 + 32 * count || usize::from(header[0]) != count || header[3] >= 0x80 {
        return Err("unexpected message header".into());
    }
    for key in keys {
        let public = key.verifying_key().to_bytes();
        let slot = (0..count)
            .find(|i| header[4 + 32 * i..4 + 32 * (i + 1)] == public)
            .ok_or("a key is not a signer of the transaction")?;
        wire[1 + 64 * slot..1 + 64 * (slot + 1)].copy_from_slice(&key.sign(&message).to_bytes());
    }
    Ok(wire)
}

/// The variable, or `fallback`; an error naming it when both are missing.
fn env(name: &str, fallback: Option<&str>) -> Result<String> {
    match (std::env::var(name), fallback) {
        (Ok(value), _) => Ok(value),
        (Err(_), Some(value)) => Ok(value.to_owned()),
        (Err(_), None) => Err(format!("set {name}").into()),
    }
}

/// Reads a solana-keygen file: a JSON array of 64 numbers, the secret seed then the public key.
/// (Parsed by hand to keep the build small: serde_json would do it too.)
fn read_keypair(path: &str) -> Result<SigningKey> {
    let text = std::fs::read_to_string(path)?;
    let bytes: Vec<u8> = text
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|n| n.trim().parse::<u8>())
        .collect::<std::result::Result<_, _>>()?;
    let bytes: [u8; 64] = bytes
        .try_into()
        .map_err(|_| format!("{path} is not a keypair file (64 bytes)"))?;
    Ok(SigningKey::from_keypair_bytes(&bytes)?)
}

/// An unsigned legacy transaction with one System Program transfer. Its blockhash is a placeholder:
/// PrepareTransaction puts in a fresh one.
fn transfer_draft(from: &[u8; 32], to: &[u8; 32], lamports: u64) -> Vec<u8> {
    let mut tx = vec![1]; // one signature slot
    tx.extend([0; 64]); // empty until signed
    tx.extend([1, 0, 1, 3]); // 1 signer, 0 read-only signers, 1 read-only other (the program); 3 keys
    tx.extend(from); // the payer, signer and writable
    tx.extend(to); // the recipient, writable
    tx.extend([0; 32]); // the System Program (address 1111...1, all zeros)
    tx.extend([0; 32]); // recent blockhash
    tx.extend([1, 2, 2, 0, 1, 12]); // 1 instruction: program key 2, accounts [0 1], 12 bytes of data
    tx.extend(2u32.to_le_bytes()); // SystemInstruction::Transfer
    tx.extend(lamports.to_le_bytes());
    tx
}

/// Fills the first signature slot of a wire transaction (the payer's); returns the signed bytes and
/// the signature in base58, the transaction's id.
fn sign(mut wire: Vec<u8>, key: &SigningKey) -> Result<(Vec<u8>, String)> {
    let slots = usize::from(*wire.first().ok_or("empty transaction")?);
    if slots == 0 || slots >= 0x80 || wire.len() <= 1 + 64 * slots {
        return Err("the prepared transaction has no room for a signature".into());
    }
    let signature = key.sign(&wire[1 + 64 * slots..]).to_bytes();
    wire[1..65].copy_from_slice(&signature);
    Ok((wire, bs58::encode(signature).into_string()))
}

//! A SOL transfer through Solgate with the `solgate-proto` crate (tonic + prost): sign with a keypair
//! file, estimate the fee, prepare the transaction (compute budget, priority fee, fresh blockhash),
//! sign it, send it without waiting, watch it to `finalized`, then list a page of a collection.
//!
//!   SOLGATE_URL        the gateway, e.g. http://127.0.0.1:8080
//!   SOLGATE_API_KEY    an API key (`npm start` in the Solgate repository prints one)
//!   SOLGATE_KEYPAIR    a solana-keygen keypair file (the localnet's demo wallet: `npm start` prints its path)
//!   SOLGATE_COLLECTION a collection address (default: the localnet's seeded collection)
//!   SOLGATE_TO         who receives 0.001 SOL (default: a fixed address)

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
    if let Err(error) = run().await {
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
    Ok(())
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

//! Streams from a Geyser endpoint with the official Rust client until it has seen every kind it asked
//! for, answers a ping, and calls the unary methods; prints one `kind value` line per first sighting.
//! Usage: solgate-geyser-interop ENDPOINT [X_TOKEN]. Exits non-zero on any failure or after 30 s.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use yellowstone_grpc_client::GeyserGrpcClient;
use yellowstone_grpc_proto::prelude::{
    subscribe_update::UpdateOneof, CommitmentLevel, SubscribeRequest, SubscribeRequestFilterAccounts,
    SubscribeRequestFilterBlocksMeta, SubscribeRequestFilterSlots, SubscribeRequestFilterTransactions,
    SubscribeRequestPing,
};

const SYSTEM_PROGRAM: &str = "11111111111111111111111111111111";
const KINDS: [&str; 5] = ["slot", "block_meta", "transaction", "transaction_status", "account"];

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(error) = tokio::time::timeout(Duration::from_secs(30), run()).await.unwrap_or(Err("timed out".into())) {
        eprintln!("geyser interop: {error}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let endpoint = args.next().ok_or("usage: solgate-geyser-interop ENDPOINT [X_TOKEN]")?;
    let token = args.next();
    let mut client = GeyserGrpcClient::build_from_shared(endpoint)?.x_token(token)?.connect().await?;

    println!("version {}", client.get_version().await?.version);
    println!("pong {}", client.ping(9).await?.count);
    let latest = client.get_latest_blockhash(Some(CommitmentLevel::Confirmed)).await?;
    let valid = client.is_blockhash_valid(latest.blockhash.clone(), Some(CommitmentLevel::Confirmed)).await?;
    println!("blockhash {} {} {}", latest.blockhash, latest.slot, valid.valid);
    println!("get_slot {}", client.get_slot(Some(CommitmentLevel::Confirmed)).await?.slot);

    let request = SubscribeRequest {
        slots: HashMap::from([("s".to_owned(), SubscribeRequestFilterSlots::default())]),
        blocks_meta: HashMap::from([("m".to_owned(), SubscribeRequestFilterBlocksMeta::default())]),
        transactions: HashMap::from([(
            "t".to_owned(),
            SubscribeRequestFilterTransactions { vote: Some(false), ..Default::default() },
        )]),
        transactions_status: HashMap::from([("ts".to_owned(), SubscribeRequestFilterTransactions::default())]),
        accounts: HashMap::from([(
            "a".to_owned(),
            SubscribeRequestFilterAccounts { owner: vec![SYSTEM_PROGRAM.to_owned()], ..Default::default() },
        )]),
        commitment: Some(CommitmentLevel::Confirmed as i32),
        ..Default::default()
    };
    let (mut sink, mut stream) = client.subscribe_with_request(Some(request.clone())).await?;
    let mut seen = BTreeSet::new();
    let mut pinged = false;
    while let Some(update) = stream.next().await {
        let update = update?;
        let (kind, value) = match update.update_oneof.ok_or("an update without a kind")? {
            UpdateOneof::Slot(slot) => ("slot", format!("{} {}", slot.slot, slot.status)),
            UpdateOneof::BlockMeta(meta) => ("block_meta", format!("{} {}", meta.slot, meta.blockhash)),
            UpdateOneof::Transaction(tx) => {
                let info = tx.transaction.ok_or("a transaction without info")?;
                ("transaction", format!("{} {}", tx.slot, bs58::encode(info.signature).into_string()))
            }
            UpdateOneof::TransactionStatus(status) => {
                ("transaction_status", format!("{} {}", status.slot, bs58::encode(status.signature).into_string()))
            }
            UpdateOneof::Account(account) => {
                let info = account.account.ok_or("an account without info")?;
                ("account", format!("{} {} {}", account.slot, bs58::encode(info.pubkey).into_string(), info.lamports))
            }
            UpdateOneof::Pong(pong) => {
                println!("stream-pong {}", pong.id);
                return Ok(());
            }
            UpdateOneof::Ping(_) => continue,
            other => return Err(format!("unexpected update {other:?}").into()),
        };
        if seen.insert(kind) {
            println!("{kind} {value} {}", update.filters.join(","));
        }
        if !pinged && KINDS.iter().all(|k| seen.contains(k)) {
            pinged = true;
            sink.send(SubscribeRequest { ping: Some(SubscribeRequestPing { id: 42 }), ..request.clone() }).await?;
        }
    }
    Err("the stream ended".into())
}

//! `solgate-example feed`: follows a collection's change feed (WatchCollection) and picks up where it left off.
//! After handling each event it saves the event's cursor to SOLGATE_CURSOR_FILE (default `collection-cursor`, one
//! line `<sequence> <cursor>`); started again, it passes the saved cursor and the stream resumes right after the
//! last event handled, with what came while it was stopped first. It stops after SOLGATE_EVENTS events (default
//! 3). A cursor older than the feed's log is refused (COLLECTION_CURSOR_EXPIRED): then it re-reads the collection
//! and watches from now.

use solgate_proto::pb::collection_service_client::CollectionServiceClient;
use solgate_proto::{ApiKey, pb};
use tonic::codegen::InterceptedService;
use tonic::transport::Channel;
use tonic_types::StatusExt;

use crate::{Result, env};

type Collections = CollectionServiceClient<InterceptedService<Channel, ApiKey>>;

/// The last event handled, as kept between runs.
struct Saved {
    sequence: u64,
    cursor: String,
}

pub async fn run() -> Result<()> {
    let channel = tonic::transport::Endpoint::from_shared(env("SOLGATE_URL", None)?)?
        .connect()
        .await?;
    let key = ApiKey::new(&env("SOLGATE_API_KEY", None)?)?;
    let mut collections = CollectionServiceClient::with_interceptor(channel, key);
    let collection = env(
        "SOLGATE_COLLECTION",
        Some("8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ"),
    )?;
    let file = env("SOLGATE_CURSOR_FILE", Some("collection-cursor"))?;
    let wanted: usize = env("SOLGATE_EVENTS", Some("3"))?.parse()?;

    let saved = match std::fs::read_to_string(&file) {
        Ok(text) => {
            let (sequence, cursor) = text
                .trim()
                .split_once(' ')
                .ok_or_else(|| format!("{file} is not `<sequence> <cursor>`"))?;
            println!("feed: resuming after sequence {sequence}");
            Some(Saved {
                sequence: sequence.parse()?,
                cursor: cursor.to_string(),
            })
        }
        Err(_) => {
            println!("feed: no saved cursor, watching from now");
            None
        }
    };
    match watch(&mut collections, &collection, &file, saved.as_ref(), wanted).await {
        Err(error) if saved.is_some() && reason(error.as_ref()) == "COLLECTION_CURSOR_EXPIRED" => {
            // The log no longer holds what followed the cursor (too old, or the gateway restarted): start over
            // from the collection's current state, then follow it from now.
            let request = pb::GetCollectionRequest {
                address: collection.clone(),
                ..Default::default()
            };
            let current = collections
                .get_collection(request)
                .await?
                .into_inner()
                .collection
                .unwrap_or_default();
            println!(
                "feed: the saved cursor is gone; re-read the collection ({} verified), watching from now",
                current.item_count
            );
            std::fs::remove_file(&file)?;
            watch(&mut collections, &collection, &file, None, wanted).await
        }
        other => other,
    }
}

/// The reason code of a gateway error, if it is one.
fn reason(error: &(dyn std::error::Error + 'static)) -> String {
    error
        .downcast_ref::<tonic::Status>()
        .and_then(|s| s.get_details_error_info())
        .map(|i| i.reason)
        .unwrap_or_default()
}

/// Handles `wanted` events after `saved` (from now when `None`), saving each one's cursor once handled.
async fn watch(
    collections: &mut Collections,
    collection: &str,
    file: &str,
    saved: Option<&Saved>,
    wanted: usize,
) -> Result<()> {
    let request = pb::WatchCollectionRequest {
        address: collection.to_string(),
        cursor: saved.map(|s| s.cursor.clone()).unwrap_or_default(),
        ..Default::default()
    };
    let mut stream = collections.watch_collection(request).await?.into_inner();
    let mut handled = 0;
    let mut last = 0;
    while handled < wanted {
        let message = stream.message().await?.ok_or("the stream ended")?;
        // A heartbeat: the stream is alive, nothing changed.
        let Some(pb::watch_collection_response::Message::Event(event)) = message.message else {
            continue;
        };
        if let (0, Some(saved)) = (handled, saved) {
            println!("feed: resumed at sequence {}", event.sequence);
            // Without a kinds filter the log has no gaps: the first event after the cursor is the next one.
            if event.sequence != saved.sequence + 1 {
                return Err(format!(
                    "resumed at {}, not right after {}",
                    event.sequence, saved.sequence
                )
                .into());
            }
        }
        handle(&event);
        // Saved once handled, and atomically: a crash mid-write must not lose the old cursor.
        std::fs::write(
            format!("{file}.tmp"),
            format!("{} {}\n", event.sequence, event.cursor),
        )?;
        std::fs::rename(format!("{file}.tmp"), file)?;
        last = event.sequence;
        handled += 1;
    }
    println!("feed: handled {handled} events, last sequence {last}, cursor saved to {file}");
    Ok(())
}

/// What the application does with a change: here, print it.
fn handle(event: &pb::CollectionEvent) {
    let what = if event.kind() == pb::CollectionEventKind::FloorChanged {
        let sol = |f: &Option<pb::FloorPrice>| f.as_ref().map(|f| f.sol).unwrap_or_default();
        format!(
            "floor {} SOL (was {})",
            sol(&event.floor_price),
            sol(&event.previous_floor_price)
        )
    } else {
        format!(
            "{} owner {} ({} in {})",
            event.asset_id, event.owner, event.instruction, event.signature
        )
    };
    println!(
        "event {} {}: {what}; verified size {}",
        event.sequence,
        event.kind().as_str_name(),
        event.verified_size
    );
}

//! CollectionService.WatchCollection on the seeded collection, whose floor the driver's marketplace moves at
//! every read (test/interop/harness/market-fixture.ts): events in sequence (FLOOR_CHANGED, and membership events
//! once the localnet's traffic changes the collection), a resume after a cursor, and the refusals.

use std::time::Duration;

use base64::Engine;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use tonic::{Code, Status};

use crate::pb::collection_service_client::CollectionServiceClient;
use crate::pb::watch_collection_response::Message;
use crate::pb::{CollectionEvent, CollectionEventKind, EventCommitment, WatchCollectionRequest};
use crate::support::{expect_error, recent};
use crate::{Ctx, Suite};

type Client = CollectionServiceClient<tonic::transport::Channel>;

/// Reads a watch until `n` events came (heartbeats are skipped), then drops it.
async fn watch(ctx: &Ctx, client: &mut Client, address: &str, cursor: &str, n: usize) -> Result<Vec<CollectionEvent>, Status> {
    let mut request = ctx.keyed(WatchCollectionRequest { address: address.into(), cursor: cursor.into(), ..Default::default() });
    request.set_timeout(Duration::from_secs(60));
    let mut stream = client.watch_collection(request).await?.into_inner();
    let mut events = Vec::new();
    while events.len() < n {
        match stream.message().await? {
            None => return Err(Status::unknown(format!("the stream ended after {} events", events.len()))),
            Some(message) => {
                if let Some(Message::Event(event)) = message.message {
                    events.push(event);
                }
            }
        }
    }
    Ok(events)
}

/// The cursor (`<epoch>.<sequence>.<scope>` in base64url) with another epoch: the same position in a log that is gone.
fn other_epoch(cursor: &str) -> Result<String, String> {
    let text = BASE64_URL_SAFE_NO_PAD.decode(cursor).map_err(|e| format!("cursor {cursor:?}: {e}"))?;
    let text = String::from_utf8(text).map_err(|e| e.to_string())?;
    let (_, rest) = text.split_once('.').ok_or_else(|| format!("cursor reads {text:?}"))?;
    Ok(BASE64_URL_SAFE_NO_PAD.encode(format!("gone.{rest}")))
}

/// Checks one event of `collection`: its position, time, and the fields of its kind. The seeded collection's floor
/// moves at every read of the driver's marketplace, so FLOOR_CHANGED events come whatever else the traffic does.
fn check_event(event: &CollectionEvent, collection: &str) -> Result<(), String> {
    if event.collection != collection || event.sequence == 0 || event.cursor.is_empty() || event.verified_size == 0 {
        return Err(format!("collection {}, sequence {}, cursor {:?}, verified size {}", event.collection, event.sequence, event.cursor, event.verified_size));
    }
    recent("time", event.time.as_ref())?;
    match event.kind() {
        CollectionEventKind::FloorChanged => {
            let floor = event.floor_price.as_ref().map(|f| f.lamports).unwrap_or(0);
            let previous = event.previous_floor_price.as_ref().map(|f| f.lamports);
            if floor == 0 || previous.is_none() || previous == Some(floor) || event.slot != 0 || !event.signature.is_empty() {
                return Err(format!("a floor change: floor {floor} after {previous:?}, slot {}, signature {:?}", event.slot, event.signature));
            }
        }
        CollectionEventKind::MemberAdded | CollectionEventKind::MemberRemoved | CollectionEventKind::MemberTransferred => {
            if event.slot == 0 || event.signature.is_empty() || event.asset_id.is_empty() || event.commitment() == EventCommitment::Unspecified {
                return Err(format!("a {:?}: slot {}, signature {:?}, asset {:?}", event.kind(), event.slot, event.signature, event.asset_id));
            }
        }
        CollectionEventKind::Unspecified => return Err("kind unspecified".into()),
    }
    Ok(())
}

/// How an event of `kind` moves the verified size.
fn size_step(kind: CollectionEventKind) -> i64 {
    match kind {
        CollectionEventKind::MemberAdded => 1,
        CollectionEventKind::MemberRemoved => -1,
        _ => 0,
    }
}

/// WatchCollection checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut client = CollectionServiceClient::new(ctx.channel.clone());
    let fx = &ctx.fx;
    let mut seen: Vec<CollectionEvent> = Vec::new();
    s.check("feed: WatchCollection streams events in sequence, each with a cursor and the verified size after it", async {
        let events = watch(ctx, &mut client, &fx.collection, "", 2).await.map_err(|e| e.to_string())?;
        for (i, event) in events.iter().enumerate() {
            check_event(event, &fx.collection).map_err(|e| format!("event {i}: {e}"))?;
        }
        let (a, b) = (&events[0], &events[1]);
        if b.sequence != a.sequence + 1 {
            return Err(format!("sequences {} then {}", a.sequence, b.sequence));
        }
        // The size moves by one with each membership event, and not otherwise.
        if b.verified_size as i64 != a.verified_size as i64 + size_step(b.kind()) {
            return Err(format!("verified size {} after {} and a {:?}", b.verified_size, a.verified_size, b.kind()));
        }
        let lamports = |f: &Option<crate::pb::FloorPrice>| f.as_ref().map(|f| f.lamports);
        if a.kind() == CollectionEventKind::FloorChanged && b.kind() == CollectionEventKind::FloorChanged && lamports(&b.previous_floor_price) != lamports(&a.floor_price) {
            return Err("the second floor change's previous floor is not the first's floor".into());
        }
        seen = events;
        Ok(())
    })
    .await;
    s.check("feed: WatchCollection from the first event's cursor resumes with the next sequence, the same event", async {
        let [first, second] = seen.as_slice() else { return Err("no events to resume after".into()) };
        let events = watch(ctx, &mut client, &fx.collection, &first.cursor, 1).await.map_err(|e| e.to_string())?;
        let got = &events[0];
        if got.sequence != first.sequence + 1 || got.cursor != second.cursor || got.kind != second.kind || got.verified_size != second.verified_size || got.floor_price != second.floor_price {
            return Err(format!("resumed at {got:?}, want {second:?}"));
        }
        Ok(())
    })
    .await;
    s.check("feed: WatchCollection with a malformed cursor ends with InvalidArgument COLLECTION_CURSOR_INVALID", async {
        expect_error(watch(ctx, &mut client, &fx.collection, "bm90LWEtY3Vyc29y", 1).await, Code::InvalidArgument, "COLLECTION_CURSOR_INVALID").map(|_| ())
    })
    .await;
    s.check("feed: WatchCollection with a cursor of another log (a restart ago) is FailedPrecondition COLLECTION_CURSOR_EXPIRED", async {
        let first = seen.first().ok_or("no cursor to alter")?;
        let gone = other_epoch(&first.cursor)?;
        let info = expect_error(watch(ctx, &mut client, &fx.collection, &gone, 1).await, Code::FailedPrecondition, "COLLECTION_CURSOR_EXPIRED")?;
        match info.as_ref().and_then(|i| i.metadata.get("oldestCursor")) {
            Some(oldest) if !oldest.is_empty() => Ok(()),
            _ => Err(format!("no oldestCursor in {info:?}")),
        }
    })
    .await;
    s.check("feed: WatchCollection of an address that is no collection is NotFound NOT_FOUND", async {
        expect_error(watch(ctx, &mut client, &fx.nft_owner, "", 1).await, Code::NotFound, "NOT_FOUND").map(|_| ())
    })
    .await;
}

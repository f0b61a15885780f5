//! TransactionService's bundle RPCs: sign a tipped draft here, send it as a one-transaction bundle,
//! follow it with WatchBundle until it is confirmed, read it back with GetBundleStatus; and the
//! refusals of each RPC.

use std::time::Duration;

use tonic::Code;

use super::why;
use crate::pb::transaction_service_client::TransactionServiceClient;
use crate::pb::watch_bundle_response::Event;
use crate::pb::{BundleStatus, BundleStatusRecord, GetBundleStatusRequest, SendBundleRequest, WatchBundleRequest};
use crate::support::{base58, expect_error, sign_wire};
use crate::{Ctx, Suite};

/// Bundle checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    if ctx.pending("TransactionService") {
        return;
    }
    let mut client = TransactionServiceClient::new(ctx.channel.clone());
    let mut bundle_id = String::new();
    let mut signature = String::new();
    s.check("bundle: SendBundle of a signed, tipped transaction answers its id, PENDING", async {
        let (signed, sig) = sign_wire(&ctx.fx.bundle_tx, &ctx.fx.payer_seed)?;
        signature = base58(&sig);
        let request = SendBundleRequest { transactions: vec![signed], ..Default::default() };
        let bundle = client.send_bundle(ctx.keyed(request)).await.map_err(why)?.into_inner().bundle.ok_or("bundle absent")?;
        if bundle.bundle_id.len() != 64 || !bundle.bundle_id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) {
            return Err(format!("bundle_id {:?} is not 64 lowercase hex digits", bundle.bundle_id));
        }
        if bundle.status() != BundleStatus::Pending || bundle.signatures != vec![signature.clone()] {
            return Err(format!("record {bundle:?}"));
        }
        bundle_id = bundle.bundle_id;
        Ok(())
    })
    .await;

    let mut confirmed: Option<BundleStatusRecord> = None;
    s.check("bundle: WatchBundle streams the record until the bundle is confirmed, its transaction in a slot", async {
        if bundle_id.is_empty() {
            return Err("nothing sent".into());
        }
        let mut request = ctx.keyed(WatchBundleRequest { bundle_id: bundle_id.clone(), ..Default::default() });
        request.set_timeout(Duration::from_secs(60));
        let mut stream = client.watch_bundle(request).await.map_err(why)?.into_inner();
        while let Some(event) = stream.message().await.map_err(why)? {
            let Some(Event::Bundle(bundle)) = event.event else { continue };
            match bundle.status() {
                BundleStatus::Confirmed | BundleStatus::Finalized => {
                    confirmed = Some(bundle);
                    break;
                }
                BundleStatus::Failed | BundleStatus::Invalid | BundleStatus::Expired => {
                    return Err(format!("the bundle will never land: {:?} ({})", bundle.status(), bundle.reason));
                }
                _ => {}
            }
        }
        let end = confirmed.as_ref().ok_or("the watch ended before the bundle was confirmed")?;
        match end.transactions.as_slice() {
            [t] if t.signature == signature && t.slot.unwrap_or(0) > 0 => Ok(()),
            other => Err(format!("transactions {other:?}")),
        }
    })
    .await;

    s.check("bundle: GetBundleStatus agrees with the watch", async {
        let end = confirmed.as_ref().ok_or("no confirmed record")?;
        let request = GetBundleStatusRequest { bundle_id: bundle_id.clone(), ..Default::default() };
        let bundle = client.get_bundle_status(ctx.keyed(request)).await.map_err(why)?.into_inner().bundle.ok_or("bundle absent")?;
        if !matches!(bundle.status(), BundleStatus::Confirmed | BundleStatus::Finalized) || bundle.slot != end.slot {
            return Err(format!("record {bundle:?}, the watch ended with {end:?}"));
        }
        Ok(())
    })
    .await;
    s.check("bundle: SendBundle of six transactions is InvalidArgument BUNDLE_TOO_LARGE", async {
        let request = SendBundleRequest { transactions: vec![ctx.fx.draft_tx.clone(); 6], ..Default::default() };
        expect_error(client.send_bundle(ctx.keyed(request)).await, Code::InvalidArgument, "BUNDLE_TOO_LARGE").map(|_| ())
    })
    .await;
    s.check("bundle: SendBundle of an unsigned transaction is InvalidArgument INVALID_TRANSACTION", async {
        let request = SendBundleRequest { transactions: vec![ctx.fx.bundle_tx.clone()], ..Default::default() };
        expect_error(client.send_bundle(ctx.keyed(request)).await, Code::InvalidArgument, "INVALID_TRANSACTION").map(|_| ())
    })
    .await;
    s.check("bundle: GetBundleStatus of an unknown id is NotFound NOT_FOUND", async {
        let request = GetBundleStatusRequest { bundle_id: "0".repeat(64), ..Default::default() };
        expect_error(client.get_bundle_status(ctx.keyed(request)).await, Code::NotFound, "NOT_FOUND").map(|_| ())
    })
    .await;
    s.check("bundle: WatchBundle of a malformed id ends the stream with INVALID_PARAMETER", async {
        let request = WatchBundleRequest { bundle_id: "not-an-id".into(), ..Default::default() };
        let result = match client.watch_bundle(ctx.keyed(request)).await {
            Err(status) => Err(status),
            Ok(response) => response.into_inner().message().await.map(|_| ()),
        };
        expect_error(result, Code::InvalidArgument, "INVALID_PARAMETER").map(|_| ())
    })
    .await;
}

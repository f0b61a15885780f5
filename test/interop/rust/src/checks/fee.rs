//! FeeService.GetFees and EstimateFees.

use tonic::Code;

use super::why;
use crate::pb::fee_service_client::FeeServiceClient;
use crate::pb::{watch_fees_response, EstimateFeesRequest, FeeEstimate, FeeSource, GetFeesRequest, WatchFeesRequest};
use crate::support::{expect_error, expect_unimplemented, payer_address, recent};
use crate::{Ctx, Suite};

/// FeeService checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut client = FeeServiceClient::new(ctx.channel.clone());
    let draft = EstimateFeesRequest { transaction: ctx.fx.draft_tx.clone(), ..Default::default() };
    if ctx.pending("FeeService") {
        s.check("fee: GetFees is Unimplemented (TODO: FeeService not landed)", async {
            expect_unimplemented(client.get_fees(ctx.keyed(GetFeesRequest::default())).await)
        })
        .await;
        s.check("fee: EstimateFees is Unimplemented (TODO: FeeService not landed)", async {
            expect_unimplemented(client.estimate_fees(ctx.keyed(draft.clone())).await)
        })
        .await;
        return;
    }
    s.check("fee: GetFees decodes base fee, source enum, levels and timestamp", async {
        let res = client.get_fees(ctx.keyed(GetFeesRequest::default())).await.map_err(why)?.into_inner();
        check_estimate(res.estimate.as_ref(), 1)
    })
    .await;
    s.check("fee: WatchFees streams an estimate at once, with the invariants of GetFees", async {
        let mut stream = client.watch_fees(ctx.keyed(WatchFeesRequest::default())).await.map_err(why)?.into_inner();
        let first = stream.message().await.map_err(why)?.ok_or("the stream ended before its first message")?;
        match first.event {
            Some(watch_fees_response::Event::Estimate(estimate)) => check_estimate(Some(&estimate), 1),
            other => Err(format!("the first message is not an estimate: {other:?}")),
        }
    })
    .await;
    s.check("fee: EstimateFees counts signatures and names the payer among writable accounts", async {
        let res = client.estimate_fees(ctx.keyed(draft.clone())).await.map_err(why)?.into_inner();
        check_estimate(res.estimate.as_ref(), 1)?;
        let payer = payer_address(&ctx.fx.payer_seed);
        let writable = &res.estimate.as_ref().expect("checked").writable_accounts;
        if !writable.contains(&payer) {
            return Err(format!("writable_accounts {writable:?} lack the payer {payer}"));
        }
        Ok(())
    })
    .await;
    s.check("fee: EstimateFees of garbage is InvalidArgument INVALID_TRANSACTION", async {
        let request = EstimateFeesRequest { transaction: vec![1, 2, 3], ..Default::default() };
        expect_error(client.estimate_fees(ctx.keyed(request)).await, Code::InvalidArgument, "INVALID_TRANSACTION").map(|_| ())
    })
    .await;
    s.check("fee: an unknown chain is NotFound UNKNOWN_CHAIN", async {
        let request = GetFeesRequest { chain: "no-such-chain".into() };
        expect_error(client.get_fees(ctx.keyed(request)).await, Code::NotFound, "UNKNOWN_CHAIN").map(|_| ())
    })
    .await;
}

/// The invariants every fee estimate keeps.
pub fn check_estimate(estimate: Option<&FeeEstimate>, signatures: u64) -> Result<(), String> {
    let est = estimate.ok_or("estimate absent")?;
    let base = est.base_fee.as_ref().ok_or("base_fee absent")?;
    if base.lamports_per_signature != 5000 || base.signatures != signatures || base.lamports != 5000 * signatures {
        return Err(format!("base fee {base:?}, want 5000 x {signatures}"));
    }
    recent("updated_at", est.updated_at.as_ref())?;
    match est.source() {
        FeeSource::Blocks | FeeSource::RecentPrioritizationFees => {
            let p = est.priority.as_ref().ok_or_else(|| format!("source {:?} without levels", est.source()))?;
            if p.unit != "microLamportsPerComputeUnit" {
                return Err(format!("unit {:?}", p.unit));
            }
            if !(p.low <= p.medium && p.medium <= p.high && p.high <= p.very_high) {
                return Err(format!("levels out of order: {p:?}"));
            }
        }
        FeeSource::None => {
            if let Some(p) = &est.priority {
                return Err(format!("source NONE with levels {p:?}"));
            }
        }
        FeeSource::Unspecified => return Err("source UNSPECIFIED".into()),
    }
    if est.window_slots == 0 {
        return Err("window_slots 0".into());
    }
    Ok(())
}

//! TransactionService: prepare a draft, sign it here, send it, follow it with WatchStatus to the end
//! of the stream, read its status; and the errors of each RPC.

use std::time::Duration;

use tonic::Code;

use super::fee::check_estimate;
use super::why;
use crate::pb::priority_fee::Choice;
use crate::pb::transaction_service_client::TransactionServiceClient;
use crate::pb::watch_status_response::Event;
use crate::pb::{
    GetTransactionStatusRequest, PrepareTransactionRequest, PrepareTransactionResponse, PriorityFee, PriorityLevel,
    SendTransactionRequest, TransactionStatus, TransactionStatusRecord, WatchStatusRequest,
};
use crate::support::{base58, expect_error, expect_unimplemented, recent, sign_wire};
use crate::{Ctx, Suite};

/// TransactionService checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut client = TransactionServiceClient::new(ctx.channel.clone());
    let zero_signature = base58(&[0u8; 64]);
    let draft = ctx.fx.draft_tx.clone();
    if ctx.pending("TransactionService") {
        s.check("transaction: PrepareTransaction is Unimplemented (TODO: TransactionService not landed)", async {
            let request = PrepareTransactionRequest { transaction: draft.clone(), ..Default::default() };
            expect_unimplemented(client.prepare_transaction(ctx.keyed(request)).await)
        })
        .await;
        s.check("transaction: SendTransaction is Unimplemented (TODO: TransactionService not landed)", async {
            let request = SendTransactionRequest { transaction: draft.clone(), ..Default::default() };
            expect_unimplemented(client.send_transaction(ctx.keyed(request)).await)
        })
        .await;
        s.check("transaction: GetTransactionStatus is Unimplemented (TODO: TransactionService not landed)", async {
            let request = GetTransactionStatusRequest { signature: zero_signature.clone(), ..Default::default() };
            expect_unimplemented(client.get_transaction_status(ctx.keyed(request)).await)
        })
        .await;
        s.check("transaction: WatchStatus is Unimplemented (TODO: TransactionService not landed)", async {
            let request = WatchStatusRequest { signature: zero_signature.clone(), ..Default::default() };
            match client.watch_status(ctx.keyed(request)).await {
                Err(status) => expect_unimplemented::<()>(Err(status)),
                Ok(response) => expect_unimplemented(response.into_inner().message().await),
            }
        })
        .await;
        return;
    }

    let mut prepared: Option<PrepareTransactionResponse> = None;
    s.check("transaction: PrepareTransaction sets a blockhash, a compute budget and the expected fee", async {
        let auto = PriorityFee { choice: Some(Choice::Level(PriorityLevel::Auto as i32)) };
        let request = PrepareTransactionRequest { transaction: draft.clone(), priority_fee: Some(auto), ..Default::default() };
        let res = client.prepare_transaction(ctx.keyed(request)).await.map_err(why)?.into_inner();
        if res.transaction.is_empty() || res.blockhash.is_empty() || res.last_valid_block_height == 0 || res.compute_unit_limit == 0 {
            return Err(format!("incomplete: {res:?}"));
        }
        let priority = (res.compute_unit_price * res.compute_unit_limit as u64).div_ceil(1_000_000);
        let expected = res.expected_fee.as_ref().map(|f| f.lamports);
        if expected != Some(5000 + priority) {
            return Err(format!("expected_fee {expected:?}, want 5000 + ceil({} * {} / 1e6)", res.compute_unit_price, res.compute_unit_limit));
        }
        check_estimate(res.estimate.as_ref(), 1).map_err(|e| format!("estimate: {e}"))?;
        prepared = Some(res);
        Ok(())
    })
    .await;

    s.check("transaction: PrepareTransaction sets an exact micro-lamports price beyond 32 bits (oneof)", async {
        const PRICE: u64 = 5_000_000_007;
        let exact = PriorityFee { choice: Some(Choice::MicroLamports(PRICE)) };
        let request = PrepareTransactionRequest { transaction: draft.clone(), priority_fee: Some(exact), ..Default::default() };
        let res = client.prepare_transaction(ctx.keyed(request)).await.map_err(why)?.into_inner();
        if res.compute_unit_price != PRICE {
            return Err(format!("compute_unit_price {}, want {PRICE}", res.compute_unit_price));
        }
        Ok(())
    })
    .await;

    let mut signature = String::new();
    s.check("transaction: SendTransaction of the signed draft answers its signature and price", async {
        let p = prepared.as_ref().ok_or("nothing prepared")?;
        let (signed, sig) = sign_wire(&p.transaction, &ctx.fx.payer_seed)?;
        let request = SendTransactionRequest { transaction: signed, confirm: Some(false), ..Default::default() };
        let result = client.send_transaction(ctx.keyed(request)).await.map_err(why)?.into_inner().result.ok_or("result absent")?;
        let want = base58(&sig);
        if result.signature != want {
            return Err(format!("signature {}, want {want}", result.signature));
        }
        if matches!(result.status(), TransactionStatus::Failed | TransactionStatus::Expired | TransactionStatus::Unspecified) {
            return Err(format!("status {:?}", result.status()));
        }
        if result.compute_unit_price != p.compute_unit_price || result.last_valid_block_height != p.last_valid_block_height {
            return Err(format!("price {} / last valid {}, prepared {} / {}", result.compute_unit_price, result.last_valid_block_height, p.compute_unit_price, p.last_valid_block_height));
        }
        signature = want;
        Ok(())
    })
    .await;

    let mut last_record: Option<TransactionStatusRecord> = None;
    s.check("transaction: WatchStatus streams records in order until the stream ends finalized", async {
        if signature.is_empty() {
            return Err("nothing sent".into());
        }
        let mut request = ctx.keyed(WatchStatusRequest { signature: signature.clone(), ..Default::default() });
        request.set_timeout(Duration::from_secs(120));
        let mut stream = client.watch_status(request).await.map_err(why)?.into_inner();
        let (mut events, mut heartbeats) = (0, 0);
        let mut last: Option<TransactionStatusRecord> = None;
        while let Some(event) = stream.message().await.map_err(|e| format!("after {events} events: {e}"))? {
            events += 1;
            match event.event {
                Some(Event::Heartbeat(_)) => heartbeats += 1,
                Some(Event::Record(record)) => {
                    if record.signature != signature {
                        return Err(format!("record for {}", record.signature));
                    }
                    recent("updated_at", record.updated_at.as_ref())?;
                    if let Some(prev) = &last
                        && record.status < prev.status
                    {
                        return Err(format!("status went back from {:?} to {:?}", prev.status(), record.status()));
                    }
                    last = Some(record);
                }
                None => return Err(format!("event {events} is empty")),
            }
        }
        let last = last.ok_or("stream ended without a record")?;
        if last.status() != TransactionStatus::Finalized {
            return Err(format!("ended at {:?} ({:?})", last.status(), last.error));
        }
        let slot = last.slot.filter(|&s| s > 0).ok_or("finalized without a slot")?;
        let want_fee = prepared.as_ref().and_then(|p| p.expected_fee.as_ref()).map(|f| f.lamports);
        let fee = last.fee.as_ref().ok_or("finalized without a fee")?;
        if Some(fee.lamports) != want_fee || (fee.sol - fee.lamports as f64 / 1e9).abs() > 1e-12 {
            return Err(format!("fee {fee:?}, want {want_fee:?} lamports"));
        }
        println!("  (watch: {events} events, {heartbeats} heartbeats, finalized in slot {slot})");
        last_record = Some(last);
        Ok(())
    })
    .await;

    s.check("transaction: GetTransactionStatus agrees with the end of the watch", async {
        let end = last_record.as_ref().ok_or("no final record")?;
        let request = GetTransactionStatusRequest { signature: signature.clone(), ..Default::default() };
        let record = client.get_transaction_status(ctx.keyed(request)).await.map_err(why)?.into_inner().record.ok_or("record absent")?;
        if record.status != end.status || record.slot != end.slot || record.fee.as_ref().map(|f| f.lamports) != end.fee.as_ref().map(|f| f.lamports) {
            return Err(format!("record {record:?}, watch ended with {end:?}"));
        }
        Ok(())
    })
    .await;
    s.check("transaction: SendTransaction of garbage is InvalidArgument INVALID_TRANSACTION", async {
        let request = SendTransactionRequest { transaction: vec![1, 2, 3], ..Default::default() };
        expect_error(client.send_transaction(ctx.keyed(request)).await, Code::InvalidArgument, "INVALID_TRANSACTION").map(|_| ())
    })
    .await;
    s.check("transaction: PrepareTransaction of garbage is InvalidArgument INVALID_TRANSACTION", async {
        let request = PrepareTransactionRequest { transaction: vec![1, 2, 3], ..Default::default() };
        expect_error(client.prepare_transaction(ctx.keyed(request)).await, Code::InvalidArgument, "INVALID_TRANSACTION").map(|_| ())
    })
    .await;
    s.check("transaction: GetTransactionStatus of a malformed signature is InvalidArgument INVALID_PARAMETER", async {
        let request = GetTransactionStatusRequest { signature: "not-a-signature".into(), ..Default::default() };
        expect_error(client.get_transaction_status(ctx.keyed(request)).await, Code::InvalidArgument, "INVALID_PARAMETER").map(|_| ())
    })
    .await;
    s.check("transaction: WatchStatus of a malformed signature ends the stream with INVALID_PARAMETER", async {
        let request = WatchStatusRequest { signature: "not-a-signature".into(), ..Default::default() };
        let result = match client.watch_status(ctx.keyed(request)).await {
            Err(status) => Err(status),
            Ok(response) => response.into_inner().message().await.map(|_| ()),
        };
        expect_error(result, Code::InvalidArgument, "INVALID_PARAMETER").map(|_| ())
    })
    .await;
}

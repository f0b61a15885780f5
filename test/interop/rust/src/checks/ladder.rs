//! The fee ladder's five RPCs (TransactionService): a nonce account made through the gateway, a ladder planned on
//! it, signed here, sent, watched to its end and read back; a second one cancelled while the localnet is frozen and
//! made final by the client's own AdvanceNonceAccount (no rung may land); and the refusals.

use std::time::Duration;

use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use ed25519_dalek::SigningKey;
use tonic::Code;

use super::why;
use crate::pb::transaction_service_client::TransactionServiceClient;
use crate::pb::watch_ladder_response::Event;
use crate::pb::{
    CancelLadderRequest, GetLadderStatusRequest, LadderRecord, LadderStatus, PrepareLadderRequest, PrepareLadderResponse, PrepareTransactionRequest,
    RungState, SendLadderRequest, SendTransactionRequest, TransactionStatus, WatchLadderRequest,
};
use crate::support::{base58, expect_error, recent, sign_wire};
use crate::wire::{advance_nonce_tx, nonce_account_draft, parse_message, sign_all, transfer_draft};
use crate::{Ctx, Suite, localnet};

type Client = TransactionServiceClient<tonic::transport::Channel>;

/// A fresh key from the system's randomness (the nonce account and the recipients).
fn fresh_key() -> SigningKey {
    let mut seed = [0u8; 32];
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    // /dev/urandom where there is one; the clock is enough to make addresses distinct otherwise.
    if std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut seed)).is_err() {
        seed[..16].copy_from_slice(&nanos.to_le_bytes());
    }
    SigningKey::from_bytes(&seed)
}

/// Makes a durable nonce account whose authority is the payer, through the gateway; returns its address.
async fn create_nonce_account(ctx: &Ctx, client: &mut Client, payer: &SigningKey) -> Result<String, String> {
    let nonce = fresh_key();
    let draft = nonce_account_draft(payer.verifying_key().as_bytes(), nonce.verifying_key().as_bytes());
    let prepared = client.prepare_transaction(ctx.keyed(PrepareTransactionRequest { transaction: draft, ..Default::default() })).await.map_err(why)?.into_inner();
    let signed = sign_all(&prepared.transaction, &[payer, &nonce])?;
    let mut request = ctx.keyed(SendTransactionRequest { transaction: signed, confirm: Some(true), ..Default::default() });
    request.set_timeout(Duration::from_secs(60));
    let result = client.send_transaction(request).await.map_err(why)?.into_inner().result.ok_or("result absent")?;
    if !matches!(result.status(), TransactionStatus::Confirmed | TransactionStatus::Finalized) {
        return Err(format!("the nonce account's creation is {:?}", result.status()));
    }
    Ok(base58(nonce.verifying_key().as_bytes()))
}

/// Plans a ladder of `rungs` rungs for a transfer from the payer to a new address.
async fn prepare(ctx: &Ctx, client: &mut Client, payer: &SigningKey, nonce: &str, rungs: u32) -> Result<PrepareLadderResponse, String> {
    let draft = transfer_draft(payer.verifying_key().as_bytes(), fresh_key().verifying_key().as_bytes(), 1_000_000);
    let request = PrepareLadderRequest { transaction: draft, nonce_account: nonce.into(), rungs: Some(rungs), deadline_slots: Some(20), ..Default::default() };
    Ok(client.prepare_ladder(ctx.keyed(request)).await.map_err(why)?.into_inner())
}

/// Checks a plan: `n` rungs at strictly rising prices, odds in (0, 1], send slots from the plan's slot on, each
/// a nonce transaction (AdvanceNonceAccount first, the nonce's value as its blockhash).
fn check_plan(plan: &PrepareLadderResponse, n: usize) -> Result<(), String> {
    if plan.rungs.len() != n || plan.nonce.is_empty() || plan.compute_unit_limit == 0 || plan.deadline_slots != 20 {
        return Err(format!("{} rungs, nonce {:?}, limit {}, deadline {}", plan.rungs.len(), plan.nonce, plan.compute_unit_limit, plan.deadline_slots));
    }
    for (i, rung) in plan.rungs.iter().enumerate() {
        if rung.odds <= 0.0 || rung.odds > 1.0 || rung.send_at_slot < plan.slot || rung.fee_lamports < 5000 {
            return Err(format!("rung {i}: odds {}, send at slot {} (plan at {}), fee {}", rung.odds, rung.send_at_slot, plan.slot, rung.fee_lamports));
        }
        if i > 0 {
            let below = &plan.rungs[i - 1];
            if rung.price <= below.price || rung.fee_lamports < below.fee_lamports || rung.send_at_slot < below.send_at_slot {
                return Err(format!("rung {i} ({} µL/CU, fee {}, slot {}) does not climb from the one below ({}, {}, {})", rung.price, rung.fee_lamports, rung.send_at_slot, below.price, below.fee_lamports, below.send_at_slot));
            }
        }
        let message = parse_message(&rung.transaction).map_err(|e| format!("rung {i}: {e}"))?;
        if base58(&message.blockhash) != plan.nonce {
            return Err(format!("rung {i}: blockhash {}, nonce {}", base58(&message.blockhash), plan.nonce));
        }
        let advance = &message.instructions[0];
        if message.keys.get(advance.program).is_none_or(|k| k.iter().any(|&b| b != 0)) || advance.data != 4u32.to_le_bytes() {
            return Err(format!("rung {i}: instruction 0 is not AdvanceNonceAccount (data {:?})", advance.data));
        }
    }
    Ok(())
}

/// Signs every rung with the payer (fee payer and nonce authority); returns them and their signatures.
fn sign_rungs(plan: &PrepareLadderResponse, seed: &[u8; 32]) -> Result<(Vec<Vec<u8>>, Vec<String>), String> {
    let mut signed = Vec::new();
    let mut signatures = Vec::new();
    for (i, rung) in plan.rungs.iter().enumerate() {
        let (wire, signature) = sign_wire(&rung.transaction, seed).map_err(|e| format!("rung {i}: {e}"))?;
        signed.push(wire);
        signatures.push(base58(&signature));
    }
    Ok((signed, signatures))
}

/// Follows a ladder to the end of its stream; returns the last record and how many records came.
async fn watch(ctx: &Ctx, client: &mut Client, id: &str) -> Result<(LadderRecord, u32), String> {
    let mut request = ctx.keyed(WatchLadderRequest { id: id.into(), ..Default::default() });
    request.set_timeout(Duration::from_secs(120));
    let mut stream = client.watch_ladder(request).await.map_err(why)?.into_inner();
    let mut last: Option<LadderRecord> = None;
    let mut records = 0;
    while let Some(message) = stream.message().await.map_err(|e| format!("after {records} records: {e}"))? {
        let Some(Event::Ladder(record)) = message.event else { continue };
        records += 1;
        if record.id != id {
            return Err(format!("a record of ladder {}", record.id));
        }
        // pending < landed < confirmed < finalized; the final states past them never turn back into those.
        if let Some(prev) = &last
            && record.status < prev.status
            && prev.status <= LadderStatus::Finalized as i32
        {
            return Err(format!("status went back from {:?} to {:?}", prev.status(), record.status()));
        }
        last = Some(record);
    }
    Ok((last.ok_or("the stream ended without a record")?, records))
}

/// The ladder checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut client = TransactionServiceClient::new(ctx.channel.clone());
    let payer = SigningKey::from_bytes(&ctx.fx.payer_seed);

    let mut plan: Option<PrepareLadderResponse> = None;
    let mut nonce = String::new();
    s.check("ladder: PrepareLadder plans rising rungs on a new nonce account, each advancing it first with its value as blockhash", async {
        nonce = create_nonce_account(ctx, &mut client, &payer).await.map_err(|e| format!("nonce account: {e}"))?;
        let planned = prepare(ctx, &mut client, &payer, &nonce, 3).await?;
        check_plan(&planned, 3)?;
        plan = Some(planned);
        Ok(())
    })
    .await;

    let mut id = String::new();
    let mut sent: Vec<String> = Vec::new();
    s.check("ladder: SendLadder takes the signed rungs and submits the cheapest first", async {
        let plan = plan.as_ref().ok_or("nothing planned")?;
        let (signed, signatures) = sign_rungs(plan, &ctx.fx.payer_seed)?;
        let request = SendLadderRequest { transactions: signed, ..Default::default() };
        let ladder = client.send_ladder(ctx.keyed(request)).await.map_err(why)?.into_inner().ladder.ok_or("ladder absent")?;
        let listed: Vec<&str> = ladder.rungs.iter().map(|r| r.signature.as_str()).collect();
        if listed != signatures.iter().map(String::as_str).collect::<Vec<_>>() || ladder.rungs.windows(2).any(|w| w[1].price <= w[0].price) {
            return Err(format!("rungs {:?}, sent {signatures:?}", ladder.rungs));
        }
        if ladder.id.is_empty() || ladder.nonce_account != nonce {
            return Err(format!("id {:?}, nonce account {} (want {nonce})", ladder.id, ladder.nonce_account));
        }
        if !matches!(ladder.status(), LadderStatus::Pending | LadderStatus::Landed | LadderStatus::Confirmed | LadderStatus::Finalized) {
            return Err(format!("status {:?} right after sending", ladder.status()));
        }
        if !matches!(ladder.rungs[0].state(), RungState::Submitted | RungState::Landed) || ladder.deadline_slot <= ladder.first_slot {
            return Err(format!("cheapest rung {:?}, deadline slot {}, first slot {}", ladder.rungs[0].state(), ladder.deadline_slot, ladder.first_slot));
        }
        id = ladder.id;
        sent = signatures;
        Ok(())
    })
    .await;

    let mut end: Option<LadderRecord> = None;
    s.check("ladder: WatchLadder streams the record, never going back, until it ends finalized with one rung landed", async {
        if id.is_empty() {
            return Err("nothing sent".into());
        }
        let plan = plan.as_ref().ok_or("nothing planned")?;
        let (last, records) = watch(ctx, &mut client, &id).await?;
        if last.status() != LadderStatus::Finalized {
            return Err(format!("ended {:?} ({:?})", last.status(), last.error));
        }
        let landed = last.rungs.iter().filter(|r| r.state() == RungState::Landed).count();
        let i = last.landed_rung.ok_or("no landed rung")? as usize;
        if landed != 1 || i >= sent.len() || last.rungs[i].state() != RungState::Landed || last.signature != sent[i] {
            return Err(format!("landed rung {i} ({}), {landed} rungs in state LANDED", last.signature));
        }
        if last.slot.unwrap_or(0) == 0 || last.price_landed != Some(plan.rungs[i].price) || last.fee_paid_lamports != Some(plan.rungs[i].fee_lamports) {
            return Err(format!("slot {:?}, price {:?}, fee {:?}; rung {i} planned at {} µL/CU, {} lamports", last.slot, last.price_landed, last.fee_paid_lamports, plan.rungs[i].price, plan.rungs[i].fee_lamports));
        }
        if last.slots_to_land.is_none() {
            return Err("no slots_to_land".into());
        }
        recent("updated_at", last.updated_at.as_ref())?;
        println!("  (ladder: {records} records, rung {i} landed in slot {}, {} slots after the first submission)", last.slot.unwrap_or(0), last.slots_to_land.unwrap_or(0));
        end = Some(last);
        Ok(())
    })
    .await;

    s.check("ladder: GetLadderStatus agrees with the end of the watch", async {
        let end = end.as_ref().ok_or("no final record")?;
        let request = GetLadderStatusRequest { id: id.clone(), ..Default::default() };
        let ladder = client.get_ladder_status(ctx.keyed(request)).await.map_err(why)?.into_inner().ladder.ok_or("ladder absent")?;
        if ladder.status != end.status || ladder.landed_rung != end.landed_rung || ladder.slot != end.slot || ladder.signature != end.signature || ladder.fee_paid_lamports != end.fee_paid_lamports {
            return Err(format!("record {ladder:?}, the watch ended with {end:?}"));
        }
        Ok(())
    })
    .await;

    let mut second: Option<PrepareLadderResponse> = None;
    s.check("ladder: CancelLadder stops a climb; the client's own AdvanceNonceAccount then ends it CANCELLED with no rung on chain", async {
        let nonce = create_nonce_account(ctx, &mut client, &payer).await.map_err(|e| format!("nonce account: {e}"))?;
        let plan = prepare(ctx, &mut client, &payer, &nonce, 3).await?;
        let (signed, signatures) = sign_rungs(&plan, &ctx.fx.payer_seed)?;
        // The client's advance is itself a nonce transaction on the same value, paying more than any rung: it goes
        // first when blocks resume, and the rung already submitted can then never land.
        let top = plan.rungs.last().ok_or("no rungs")?.price;
        let (advance, advance_signature) = advance_nonce_tx(&payer, &nonce, &plan.nonce, 2 * top + 1_000_000)?;
        second = Some(plan);
        let url = &ctx.fx.localnet_url;
        // Frozen, the first rung waits in the localnet's queue, so the cancel finds the ladder pending.
        localnet::call(url, "localnet_setFaults", r#"[{"freeze":true}]"#)?;
        let outcome = async {
            let ladder = client.send_ladder(ctx.keyed(SendLadderRequest { transactions: signed, ..Default::default() })).await.map_err(|e| format!("SendLadder: {e}"))?.into_inner().ladder.ok_or("ladder absent")?;
            let cancelled = client.cancel_ladder(ctx.keyed(CancelLadderRequest { id: ladder.id.clone(), ..Default::default() })).await.map_err(|e| format!("CancelLadder: {e}"))?.into_inner().ladder.ok_or("ladder absent")?;
            if cancelled.status() != LadderStatus::Cancelled {
                return Err(format!("CancelLadder answered {:?}", cancelled.status()));
            }
            let wire = BASE64_STANDARD.encode(&advance);
            localnet::call(url, "sendTransaction", &format!(r#"["{wire}",{{"encoding":"base64","skipPreflight":true}}]"#))?;
            Ok::<String, String>(ladder.id)
        }
        .await;
        localnet::call(url, "localnet_setFaults", r#"[{"freeze":false}]"#)?;
        let (last, _) = watch(ctx, &mut client, &outcome?).await?;
        if last.status() != LadderStatus::Cancelled || last.landed_rung.is_some() || last.rungs.iter().any(|r| r.state() != RungState::Dead) {
            return Err(format!("ended {:?}, landed rung {:?}, rungs {:?}", last.status(), last.landed_rung, last.rungs.iter().map(|r| r.state()).collect::<Vec<_>>()));
        }
        if !localnet::on_chain(url, &advance_signature)? {
            return Err("the client's advance is not on chain".into());
        }
        for (i, signature) in signatures.iter().enumerate() {
            if localnet::on_chain(url, signature)? {
                return Err(format!("rung {i} is on chain"));
            }
        }
        Ok(())
    })
    .await;

    s.check("ladder: SendLadder of two rungs at one price is InvalidArgument LADDER_PRICES_NOT_RISING, nothing sent", async {
        let plan = second.as_ref().ok_or("nothing planned")?;
        let (signed, _) = sign_rungs(plan, &ctx.fx.payer_seed)?;
        let request = SendLadderRequest { transactions: vec![signed[0].clone(), signed[0].clone()], ..Default::default() };
        expect_error(client.send_ladder(ctx.keyed(request)).await, Code::InvalidArgument, "LADDER_PRICES_NOT_RISING").map(|_| ())
    })
    .await;
    s.check("ladder: PrepareLadder on an account that is no nonce is FailedPrecondition NONCE_ACCOUNT_INVALID", async {
        let payer_address = base58(payer.verifying_key().as_bytes());
        let draft = transfer_draft(payer.verifying_key().as_bytes(), fresh_key().verifying_key().as_bytes(), 1_000_000);
        let request = PrepareLadderRequest { transaction: draft, nonce_account: payer_address, ..Default::default() };
        expect_error(client.prepare_ladder(ctx.keyed(request)).await, Code::FailedPrecondition, "NONCE_ACCOUNT_INVALID").map(|_| ())
    })
    .await;
    s.check("ladder: GetLadderStatus, WatchLadder and CancelLadder of an unknown ladder are NotFound NOT_FOUND", async {
        let mut bytes = [0u8; 64];
        bytes[0] = 7;
        let unknown = base58(&bytes);
        expect_error(client.get_ladder_status(ctx.keyed(GetLadderStatusRequest { id: unknown.clone(), ..Default::default() })).await, Code::NotFound, "NOT_FOUND").map_err(|e| format!("GetLadderStatus: {e}"))?;
        expect_error(client.cancel_ladder(ctx.keyed(CancelLadderRequest { id: unknown.clone(), ..Default::default() })).await, Code::NotFound, "NOT_FOUND").map_err(|e| format!("CancelLadder: {e}"))?;
        let watched = match client.watch_ladder(ctx.keyed(WatchLadderRequest { id: unknown, ..Default::default() })).await {
            Err(status) => Err(status),
            Ok(response) => response.into_inner().message().await.map(|_| ()),
        };
        expect_error(watched, Code::NotFound, "NOT_FOUND").map(|_| ()).map_err(|e| format!("WatchLadder: {e}"))
    })
    .await;
}

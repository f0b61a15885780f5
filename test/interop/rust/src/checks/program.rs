//! Auth, and ProgramService.ListProgramAccounts.

use tonic::Code;

use super::why;
use crate::fixture::ExpectedAccount;
use crate::pb::program_service_client::ProgramServiceClient;
use crate::pb::{DataFormat, ListProgramAccountsRequest, ProgramAccount};
use crate::support::{expect_error, expect_unimplemented};
use crate::{Ctx, Suite};

fn query(ctx: &Ctx, limit: u32, cursor: &str) -> ListProgramAccountsRequest {
    ListProgramAccountsRequest {
        program_id: ctx.fx.program_id.clone(),
        size: Some(ctx.fx.program_size),
        r#match: vec![ctx.fx.program_match.clone()],
        limit,
        cursor: cursor.to_string(),
        ..Default::default()
    }
}

/// Calls without a key, or with a wrong one, are refused with UNAUTHENTICATED.
pub async fn auth(ctx: &Ctx, s: &mut Suite) {
    let mut client = ProgramServiceClient::new(ctx.channel.clone());
    s.check("auth: no key is Unauthenticated with ErrorInfo UNAUTHENTICATED", async {
        let result = client.list_program_accounts(query(ctx, 1, "")).await;
        expect_error(result, Code::Unauthenticated, "UNAUTHENTICATED").map(|_| ())
    })
    .await;
    s.check("auth: a wrong key is Unauthenticated", async {
        let mut request = tonic::Request::new(query(ctx, 1, ""));
        request.metadata_mut().insert("authorization", "Bearer not-the-key".parse().unwrap());
        let result = client.list_program_accounts(request).await;
        expect_error(result, Code::Unauthenticated, "UNAUTHENTICATED").map(|_| ())
    })
    .await;
}

/// ProgramService checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut client = ProgramServiceClient::new(ctx.channel.clone());
    let fx = &ctx.fx;
    if ctx.pending("ProgramService") {
        s.check("program: ListProgramAccounts is Unimplemented (TODO: ProgramService not landed)", async {
            expect_unimplemented(client.list_program_accounts(ctx.keyed(query(ctx, 0, ""))).await)
        })
        .await;
        return;
    }
    s.check("program: ListProgramAccounts pages of 1 follow next_cursor to the end", async {
        let mut got = Vec::new();
        let mut cursor = String::new();
        for page in 0.. {
            if page > fx.program_expect.len() + 1 {
                return Err(format!("more than {page} pages"));
            }
            let res = client.list_program_accounts(ctx.keyed(query(ctx, 1, &cursor))).await.map_err(why)?.into_inner();
            if res.program_id != fx.program_id {
                return Err(format!("program_id {:?}", res.program_id));
            }
            if res.items.len() > 1 {
                return Err(format!("page {page} has {} items, limit was 1", res.items.len()));
            }
            got.extend(res.items);
            match res.next_cursor {
                Some(next) => cursor = next,
                None => break,
            }
        }
        compare_accounts(&got, &fx.program_expect)
    })
    .await;
    s.check("program: one page of 500 holds every account, next_cursor absent", async {
        let res = client.list_program_accounts(ctx.keyed(query(ctx, 500, ""))).await.map_err(why)?.into_inner();
        if let Some(next) = res.next_cursor {
            return Err(format!("next_cursor {next:?} on the only page"));
        }
        compare_accounts(&res.items, &fx.program_expect)
    })
    .await;
    s.check("program: a malformed program id is InvalidArgument INVALID_ADDRESS", async {
        let request = ListProgramAccountsRequest { program_id: "not-an-address".into(), ..Default::default() };
        let result = client.list_program_accounts(ctx.keyed(request)).await;
        expect_error(result, Code::InvalidArgument, "INVALID_ADDRESS").map(|_| ())
    })
    .await;
    s.check("program: limit 501 is InvalidArgument INVALID_PARAMETER naming the field", async {
        let result = client.list_program_accounts(ctx.keyed(query(ctx, 501, ""))).await;
        let info = expect_error(result, Code::InvalidArgument, "INVALID_PARAMETER")?.expect("reason given");
        match info.metadata.get("field").map(String::as_str) {
            Some("limit") => Ok(()),
            _ => Err(format!("ErrorInfo.metadata {:?}, want field=limit", info.metadata)),
        }
    })
    .await;
    s.check("program: an unknown chain is NotFound UNKNOWN_CHAIN", async {
        let request = ListProgramAccountsRequest { chain: "no-such-chain".into(), ..query(ctx, 1, "") };
        let result = client.list_program_accounts(ctx.keyed(request)).await;
        expect_error(result, Code::NotFound, "UNKNOWN_CHAIN").map(|_| ())
    })
    .await;
}

/// Checks every field of the listed accounts against the expectation, in order.
fn compare_accounts(got: &[ProgramAccount], want: &[ExpectedAccount]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} accounts, want {}", got.len(), want.len()));
    }
    for (i, (a, w)) in got.iter().zip(want).enumerate() {
        let data = a.data.as_ref().ok_or_else(|| format!("{} has no data", w.address))?;
        let parsed = data.parsed.as_ref().ok_or_else(|| format!("{} is not parsed", w.address))?;
        let info = parsed.info.as_ref().ok_or_else(|| format!("{} has no info", w.address))?;
        let amount = info.token_amount.as_ref().ok_or_else(|| format!("{} has no amount", w.address))?;
        let ui = ui_string(w.raw, w.decimals);
        if a.address != w.address {
            return Err(format!("item {i} address {}, want {} (sorted by address)", a.address, w.address));
        }
        if a.lamports != w.lamports || (a.sol - w.lamports as f64 / 1e9).abs() > 1e-9 || a.space != w.space {
            return Err(format!("{}: lamports {} sol {} space {}, want {} / {}", w.address, a.lamports, a.sol, a.space, w.lamports, w.space));
        }
        if data.format() != DataFormat::Parsed || data.program.as_deref() != Some("spl-token") || parsed.r#type != "account" {
            return Err(format!("{}: format {:?} program {:?} type {:?}", w.address, data.format(), data.program, parsed.r#type));
        }
        if info.mint != w.mint || info.owner != w.owner || info.state != w.state {
            return Err(format!("{}: {}/{}/{}, want {}/{}/{}", w.address, info.mint, info.owner, info.state, w.mint, w.owner, w.state));
        }
        if amount.raw != w.raw || amount.decimals != w.decimals || amount.ui_string != ui {
            return Err(format!("{}: amount {} ({} decimals, {:?}), want {} ({}, {ui:?})", w.address, amount.raw, amount.decimals, amount.ui_string, w.raw, w.decimals));
        }
    }
    Ok(())
}

/// raw / 10^decimals exactly, without trailing zeros (as Solana's uiAmountString).
fn ui_string(raw: u64, decimals: u32) -> String {
    let digits = format!("{raw:0width$}", width = decimals as usize + 1);
    let (whole, frac) = digits.split_at(digits.len() - decimals as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { whole.to_string() } else { format!("{whole}.{frac}") }
}

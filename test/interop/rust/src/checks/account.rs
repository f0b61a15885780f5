//! AccountService.GetAccount, WalletService.ListWalletTokens and ListWalletNfts, and
//! TokenService.ListTokenHolders, against the token accounts and NFTs the fixture lists.

use tonic::Code;

use super::why;
use crate::pb::account_service_client::AccountServiceClient;
use crate::pb::token_service_client::TokenServiceClient;
use crate::pb::wallet_service_client::WalletServiceClient;
use crate::pb::{GetAccountRequest, ListTokenHoldersRequest, ListWalletNftsRequest, ListWalletTokensRequest};
use crate::support::expect_error;
use crate::{Ctx, Suite};

/// AccountService, WalletService and TokenService checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut accounts = AccountServiceClient::new(ctx.channel.clone());
    let mut wallets = WalletServiceClient::new(ctx.channel.clone());
    let mut tokens = TokenServiceClient::new(ctx.channel.clone());
    let fx = &ctx.fx;
    let mint = fx.program_match.trim_start_matches("0:").to_string();
    let first = &fx.program_expect[0];

    s.check("account: GetAccount decodes a token account with its 64-bit amount", async {
        let request = GetAccountRequest { address: first.address.clone(), ..Default::default() };
        let account = accounts.get_account(ctx.keyed(request)).await.map_err(why)?.into_inner().account.ok_or("account absent")?;
        let data = account.data.ok_or("data absent")?;
        let info = data.parsed.and_then(|p| p.info).ok_or("not a parsed token account")?;
        let amount = info.token_amount.clone().ok_or("token_amount absent")?;
        if account.owner != fx.program_id || account.lamports != first.lamports || account.space != first.space {
            return Err(format!("{} owner {} lamports {} space {}", account.address, account.owner, account.lamports, account.space));
        }
        if info.mint != first.mint || info.owner != first.owner || amount.raw != first.raw || amount.decimals != first.decimals {
            return Err(format!("info {info:?}, want {} {} {} {}", first.mint, first.owner, first.raw, first.decimals));
        }
        Ok(())
    })
    .await;
    s.check("account: GetAccount of a mint gives the node's parsed fields in a Struct", async {
        let request = GetAccountRequest { address: mint.clone(), ..Default::default() };
        let account = accounts.get_account(ctx.keyed(request)).await.map_err(why)?.into_inner().account.ok_or("account absent")?;
        let parsed = account.data.and_then(|d| d.parsed).ok_or("not parsed")?;
        let decimals = parsed.fields.as_ref().and_then(|f| f.fields.get("decimals")).and_then(|v| match v.kind {
            Some(prost_types::value::Kind::NumberValue(n)) => Some(n as u32),
            _ => None,
        });
        if parsed.r#type != "mint" || decimals != Some(first.decimals) {
            return Err(format!("parsed {:?} with decimals {decimals:?}, want mint with {}", parsed.r#type, first.decimals));
        }
        Ok(())
    })
    .await;
    s.check("account: GetAccount of a malformed address is InvalidArgument INVALID_ADDRESS", async {
        let request = GetAccountRequest { address: "not-an-address".into(), ..Default::default() };
        expect_error(accounts.get_account(ctx.keyed(request)).await, Code::InvalidArgument, "INVALID_ADDRESS").map(|_| ())
    })
    .await;

    s.check("wallet: ListWalletTokens lists the holder's balance of the mint", async {
        let request = ListWalletTokensRequest { owner: first.owner.clone(), include_zero: true, ..Default::default() };
        let res = wallets.list_wallet_tokens(ctx.keyed(request)).await.map_err(why)?.into_inner();
        let found = res.items.iter().find(|t| t.token_account == first.address).ok_or(format!("{} not listed", first.address))?;
        let raw = found.amount.as_ref().map(|a| a.raw);
        if found.mint != mint || raw != Some(first.raw) {
            return Err(format!("{found:?}, want {} of {mint}", first.raw));
        }
        Ok(())
    })
    .await;
    s.check("wallet: ListWalletNfts pages of 2 list the owner's NFTs by id", async {
        let mut ids = Vec::new();
        let mut cursor = String::new();
        for _ in 0..100 {
            let request = ListWalletNftsRequest { owner: fx.nft_owner.clone(), limit: 2, cursor: cursor.clone(), ..Default::default() };
            let res = wallets.list_wallet_nfts(ctx.keyed(request)).await.map_err(why)?.into_inner();
            ids.extend(res.items.into_iter().map(|n| n.id));
            match res.next_cursor {
                Some(next) => cursor = next,
                None => break,
            }
        }
        if ids != fx.nft_owner_ids {
            return Err(format!("NFTs {ids:?}, want {:?}", fx.nft_owner_ids));
        }
        Ok(())
    })
    .await;

    s.check("token: ListTokenHolders pages of 7 list every holder with a balance", async {
        let mut got = Vec::new();
        let mut cursor = String::new();
        for _ in 0..100 {
            let request = ListTokenHoldersRequest { mint: mint.clone(), limit: 7, cursor: cursor.clone(), ..Default::default() };
            let res = tokens.list_token_holders(ctx.keyed(request)).await.map_err(why)?.into_inner();
            for h in res.items {
                got.push(format!("{}:{}:{}", h.token_account, h.owner, h.amount.map(|a| a.raw).unwrap_or_default()));
            }
            match res.next_cursor {
                Some(next) => cursor = next,
                None => break,
            }
        }
        let mut want: Vec<String> =
            fx.program_expect.iter().filter(|a| a.raw > 0).map(|a| format!("{}:{}:{}", a.address, a.owner, a.raw)).collect();
        got.sort();
        want.sort();
        if got != want {
            return Err(format!("holders {got:?}, want {want:?}"));
        }
        Ok(())
    })
    .await;
}

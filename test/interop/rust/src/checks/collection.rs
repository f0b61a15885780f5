//! CollectionService.GetCollection and ListCollectionNfts.

use tonic::Code;

use super::why;
use crate::pb::collection_service_client::CollectionServiceClient;
use crate::pb::{GetCollectionRequest, ListCollectionNftsRequest, TokenStandard};
use crate::support::{expect_error, expect_unimplemented, recent};
use crate::{Ctx, Suite};

/// CollectionService checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut client = CollectionServiceClient::new(ctx.channel.clone());
    let fx = &ctx.fx;
    let get = GetCollectionRequest { address: fx.collection.clone(), ..Default::default() };
    let list = |limit: u32, cursor: &str| ListCollectionNftsRequest {
        address: fx.collection.clone(),
        limit,
        cursor: cursor.to_string(),
        ..Default::default()
    };
    if ctx.pending("CollectionService") {
        s.check("collection: GetCollection is Unimplemented (TODO: CollectionService not landed)", async {
            expect_unimplemented(client.get_collection(ctx.keyed(get.clone())).await)
        })
        .await;
        s.check("collection: ListCollectionNfts is Unimplemented (TODO: CollectionService not landed)", async {
            expect_unimplemented(client.list_collection_nfts(ctx.keyed(list(0, ""))).await)
        })
        .await;
        return;
    }
    s.check("collection: GetCollection gives name, 64-bit item count and a well-formed floor price", async {
        let res = client.get_collection(ctx.keyed(get.clone())).await.map_err(why)?.into_inner();
        let col = res.collection.ok_or("collection absent")?;
        if col.address != fx.collection || col.name != fx.collection_name || col.item_count != fx.collection_count {
            return Err(format!(
                "collection {} {:?} with {} items, want {} {:?} with {}",
                col.address, col.name, col.item_count, fx.collection, fx.collection_name, fx.collection_count
            ));
        }
        if let Some(fp) = col.floor_price {
            recent("floor_price.updated_at", fp.updated_at.as_ref())?;
            if (fp.sol - fp.lamports as f64 / 1e9).abs() > 1e-9 || fp.source.is_empty() {
                return Err(format!("floor price {fp:?}"));
            }
        }
        Ok(())
    })
    .await;
    s.check("collection: ListCollectionNfts pages of 1 list the verified members by id", async {
        let mut ids = Vec::new();
        let mut cursor = String::new();
        for page in 0.. {
            if page > fx.collection_members.len() + 1 {
                return Err(format!("more than {page} pages"));
            }
            let res = client.list_collection_nfts(ctx.keyed(list(1, &cursor))).await.map_err(why)?.into_inner();
            for nft in res.items {
                if nft.standard() == TokenStandard::Unspecified || nft.name.is_empty() {
                    return Err(format!("member {}: standard {:?}, name {:?}", nft.id, nft.standard(), nft.name));
                }
                ids.push(nft.id);
            }
            match res.next_cursor {
                Some(next) => cursor = next,
                None => break,
            }
        }
        if ids != fx.collection_members {
            return Err(format!("members {ids:?}, want {:?}", fx.collection_members));
        }
        Ok(())
    })
    .await;
    s.check("collection: a malformed address is InvalidArgument INVALID_ADDRESS", async {
        let request = GetCollectionRequest { address: "not-an-address".into(), ..Default::default() };
        expect_error(client.get_collection(ctx.keyed(request)).await, Code::InvalidArgument, "INVALID_ADDRESS").map(|_| ())
    })
    .await;
    s.check("collection: limit 1001 is InvalidArgument INVALID_PARAMETER", async {
        expect_error(client.list_collection_nfts(ctx.keyed(list(1001, ""))).await, Code::InvalidArgument, "INVALID_PARAMETER").map(|_| ())
    })
    .await;
}

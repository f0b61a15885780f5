//! WebhookService: a webhook on the seeded collection's floor changes created, listed, its deliveries queued as the
//! feed moves, deleted; and the refusals. Its URL is a public address no delivery reaches from the test machine,
//! so deliveries queue and retry (a loopback receiver would need the server to allow private URLs).

use std::time::{Duration, Instant};

use tonic::Code;

use super::why;
use crate::pb::webhook_service_client::WebhookServiceClient;
use crate::pb::{
    CollectionEventKind, CreateWebhookRequest, DeleteWebhookRequest, ListWebhookDeliveriesRequest, ListWebhooksRequest, WebhookDeliveryState,
};
use crate::support::{expect_error, recent};
use crate::{Ctx, Suite};

const UNREACHABLE_HOOK: &str = "https://93.184.216.34/solgate-interop";

/// WebhookService checks.
pub async fn run(ctx: &Ctx, s: &mut Suite) {
    let mut client = WebhookServiceClient::new(ctx.channel.clone());
    let fx = &ctx.fx;
    let floor = CollectionEventKind::FloorChanged as i32;
    let mut id = String::new();
    s.check("webhook: CreateWebhook answers the webhook and its whsec_ secret once; ListWebhooks lists it", async {
        let request = CreateWebhookRequest { url: UNREACHABLE_HOOK.into(), collections: vec![fx.collection.clone()], kinds: vec![floor], ..Default::default() };
        let res = client.create_webhook(ctx.keyed(request)).await.map_err(why)?.into_inner();
        let webhook = res.webhook.ok_or("webhook absent")?;
        if webhook.id.is_empty() || !res.secret.starts_with("whsec_") {
            return Err(format!("id {:?}, secret {:?}", webhook.id, res.secret));
        }
        if webhook.url != UNREACHABLE_HOOK || webhook.collections != [fx.collection.clone()] || webhook.kinds != [floor] || !webhook.enabled {
            return Err(format!("webhook {webhook:?}"));
        }
        recent("create_time", webhook.create_time.as_ref())?;
        let listed = client.list_webhooks(ctx.keyed(ListWebhooksRequest::default())).await.map_err(why)?.into_inner().webhooks;
        if !listed.iter().any(|w| w.id == webhook.id && w.url == UNREACHABLE_HOOK) {
            return Err(format!("ListWebhooks: {listed:?} has no {}", webhook.id));
        }
        id = webhook.id;
        Ok(())
    })
    .await;
    s.check("webhook: ListWebhookDeliveries shows the feed's FLOOR_CHANGED events queued for it", async {
        if id.is_empty() {
            return Err("no webhook".into());
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let request = ListWebhookDeliveriesRequest { id: id.clone(), ..Default::default() };
            let deliveries = client.list_webhook_deliveries(ctx.keyed(request)).await.map_err(why)?.into_inner().deliveries;
            if !deliveries.is_empty() {
                for delivery in &deliveries {
                    let event = delivery.event.as_ref().ok_or("a delivery without its event")?;
                    if delivery.id.is_empty() || delivery.webhook_id != id || event.kind != floor || event.collection != fx.collection
                        || matches!(delivery.state(), WebhookDeliveryState::Unspecified | WebhookDeliveryState::Delivered)
                    {
                        return Err(format!("delivery {delivery:?}"));
                    }
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("no delivery after 30 s".into());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    s.check("webhook: DeleteWebhook removes it; deleting it again is NotFound WEBHOOK_NOT_FOUND", async {
        if id.is_empty() {
            return Err("no webhook".into());
        }
        client.delete_webhook(ctx.keyed(DeleteWebhookRequest { id: id.clone(), ..Default::default() })).await.map_err(why)?;
        let listed = client.list_webhooks(ctx.keyed(ListWebhooksRequest::default())).await.map_err(why)?.into_inner().webhooks;
        if listed.iter().any(|w| w.id == id) {
            return Err(format!("{id} is still listed"));
        }
        let again = client.delete_webhook(ctx.keyed(DeleteWebhookRequest { id: id.clone(), ..Default::default() })).await;
        expect_error(again, Code::NotFound, "WEBHOOK_NOT_FOUND").map(|_| ())
    })
    .await;
    s.check("webhook: CreateWebhook to a loopback URL is InvalidArgument WEBHOOK_URL_REFUSED", async {
        let request = CreateWebhookRequest { url: "https://127.0.0.1/hook".into(), collections: vec![fx.collection.clone()], ..Default::default() };
        expect_error(client.create_webhook(ctx.keyed(request)).await, Code::InvalidArgument, "WEBHOOK_URL_REFUSED").map(|_| ())
    })
    .await;
}

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// A public address no delivery reaches from the test machine: the webhook is registered and its deliveries queue
// and retry, which is what the checks look at. (A loopback receiver would need the server to allow private URLs.)
const unreachableHook = "https://93.184.216.34/solgate-interop"

// webhookChecks covers WebhookService: a webhook on the seeded collection's floor changes created, listed, its
// deliveries queued as the feed moves, deleted; and the refusals.
func (c *clients) webhookChecks(s *suite) {
	hooks := pb.NewWebhookServiceClient(c.conn)
	fx := c.fx
	floor := pb.CollectionEventKind_COLLECTION_EVENT_KIND_FLOOR_CHANGED
	var id string
	s.check("webhook: CreateWebhook answers the webhook and its whsec_ secret once; ListWebhooks lists it", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := hooks.CreateWebhook(ctx, &pb.CreateWebhookRequest{Url: unreachableHook, Collections: []string{fx.collection}, Kinds: []pb.CollectionEventKind{floor}})
		if err != nil {
			return err
		}
		w := res.GetWebhook()
		switch {
		case w.GetId() == "" || !strings.HasPrefix(res.GetSecret(), "whsec_"):
			return fmt.Errorf("id %q, secret %q", w.GetId(), res.GetSecret())
		case w.GetUrl() != unreachableHook || !slices.Equal(w.GetCollections(), []string{fx.collection}) || !slices.Equal(w.GetKinds(), []pb.CollectionEventKind{floor}) || !w.GetEnabled():
			return fmt.Errorf("webhook %v", w)
		}
		if err := recent("create_time", w.GetCreateTime()); err != nil {
			return err
		}
		id = w.GetId()
		list, err := hooks.ListWebhooks(ctx, &pb.ListWebhooksRequest{})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(list.GetWebhooks(), func(l *pb.Webhook) bool { return l.GetId() == id && l.GetUrl() == unreachableHook }) {
			return fmt.Errorf("ListWebhooks: %v has no %s", list.GetWebhooks(), id)
		}
		return nil
	})
	s.check("webhook: ListWebhookDeliveries shows the feed's FLOOR_CHANGED events queued for it", func() error {
		if id == "" {
			return errors.New("no webhook")
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			ctx, cancel := c.ctx(10 * time.Second)
			res, err := hooks.ListWebhookDeliveries(ctx, &pb.ListWebhookDeliveriesRequest{Id: id})
			cancel()
			if err != nil {
				return err
			}
			if d := res.GetDeliveries(); len(d) > 0 {
				for _, delivery := range d {
					ev := delivery.GetEvent()
					if delivery.GetId() == "" || delivery.GetWebhookId() != id || ev.GetKind() != floor || ev.GetCollection() != fx.collection ||
						delivery.GetState() == pb.WebhookDeliveryState_WEBHOOK_DELIVERY_STATE_UNSPECIFIED || delivery.GetState() == pb.WebhookDeliveryState_WEBHOOK_DELIVERY_STATE_DELIVERED {
						return fmt.Errorf("delivery %v", delivery)
					}
				}
				return nil
			}
			if time.Now().After(deadline) {
				return errors.New("no delivery after 30 s")
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	s.check("webhook: DeleteWebhook removes it; deleting it again is NotFound WEBHOOK_NOT_FOUND", func() error {
		if id == "" {
			return errors.New("no webhook")
		}
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		if _, err := hooks.DeleteWebhook(ctx, &pb.DeleteWebhookRequest{Id: id}); err != nil {
			return err
		}
		list, err := hooks.ListWebhooks(ctx, &pb.ListWebhooksRequest{})
		if err != nil {
			return err
		}
		if slices.ContainsFunc(list.GetWebhooks(), func(l *pb.Webhook) bool { return l.GetId() == id }) {
			return fmt.Errorf("%s is still listed", id)
		}
		_, err = hooks.DeleteWebhook(ctx, &pb.DeleteWebhookRequest{Id: id})
		_, err = expectError(err, codes.NotFound, "WEBHOOK_NOT_FOUND")
		return err
	})
	s.check("webhook: CreateWebhook to a loopback URL is InvalidArgument WEBHOOK_URL_REFUSED", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := hooks.CreateWebhook(ctx, &pb.CreateWebhookRequest{Url: "https://127.0.0.1/hook", Collections: []string{fx.collection}})
		_, err = expectError(err, codes.InvalidArgument, "WEBHOOK_URL_REFUSED")
		return err
	})
}

package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// feedChecks covers CollectionService.WatchCollection on the seeded collection, whose floor the driver's
// marketplace moves at every read (test/interop/harness/market-fixture.ts): events in sequence (FLOOR_CHANGED, and
// membership events once the localnet's traffic changes the collection), a resume after a cursor, and the refusals.
func (c *clients) feedChecks(s *suite) {
	cols := pb.NewCollectionServiceClient(c.conn)
	fx := c.fx
	var first, second *pb.CollectionEvent
	s.check("feed: WatchCollection streams events in sequence, each with a cursor and the verified size after it", func() error {
		events, err := c.watchEvents(cols, "", 2)
		if err != nil {
			return err
		}
		for i, ev := range events {
			if err := checkEvent(ev, fx.collection); err != nil {
				return fmt.Errorf("event %d: %w", i, err)
			}
		}
		if events[1].GetSequence() != events[0].GetSequence()+1 {
			return fmt.Errorf("sequences %d then %d", events[0].GetSequence(), events[1].GetSequence())
		}
		// The size moves by one with each membership event, and not otherwise.
		if want := int64(events[0].GetVerifiedSize()) + sizeStep(events[1].GetKind()); int64(events[1].GetVerifiedSize()) != want {
			return fmt.Errorf("verified size %d after %d and a %s", events[1].GetVerifiedSize(), events[0].GetVerifiedSize(), events[1].GetKind())
		}
		if a, b := events[0], events[1]; a.GetKind() == b.GetKind() && b.GetKind() == floorChanged &&
			b.GetPreviousFloorPrice().GetLamports() != a.GetFloorPrice().GetLamports() {
			return fmt.Errorf("the second floor change's previous floor %d is not the first's floor %d",
				b.GetPreviousFloorPrice().GetLamports(), a.GetFloorPrice().GetLamports())
		}
		first, second = events[0], events[1]
		return nil
	})
	s.check("feed: WatchCollection from the first event's cursor resumes with the next sequence, the same event", func() error {
		if first == nil {
			return errors.New("no events to resume after")
		}
		events, err := c.watchEvents(cols, first.GetCursor(), 1)
		if err != nil {
			return err
		}
		got := events[0]
		if got.GetSequence() != first.GetSequence()+1 || got.GetCursor() != second.GetCursor() || got.GetKind() != second.GetKind() ||
			got.GetVerifiedSize() != second.GetVerifiedSize() || got.GetFloorPrice().GetLamports() != second.GetFloorPrice().GetLamports() {
			return fmt.Errorf("resumed at %v, want %v", got, second)
		}
		return nil
	})
	s.check("feed: WatchCollection with a malformed cursor ends with InvalidArgument COLLECTION_CURSOR_INVALID", func() error {
		_, err := c.watchEvents(cols, "bm90LWEtY3Vyc29y", 1)
		_, err = expectError(err, codes.InvalidArgument, "COLLECTION_CURSOR_INVALID")
		return err
	})
	s.check("feed: WatchCollection with a cursor of another log (a restart ago) is FailedPrecondition COLLECTION_CURSOR_EXPIRED", func() error {
		if first == nil {
			return errors.New("no cursor to alter")
		}
		// The cursor is `<epoch>.<sequence>.<scope>` in base64url: the same position in a log that is gone.
		gone, err := otherEpoch(first.GetCursor())
		if err != nil {
			return err
		}
		_, err = c.watchEvents(cols, gone, 1)
		info, err := expectError(err, codes.FailedPrecondition, "COLLECTION_CURSOR_EXPIRED")
		if err == nil && info.GetMetadata()["oldestCursor"] == "" {
			return fmt.Errorf("no oldestCursor in %v", info.GetMetadata())
		}
		return err
	})
	s.check("feed: WatchCollection of an address that is no collection is NotFound NOT_FOUND", func() error {
		_, err := c.watchCollection(cols, &pb.WatchCollectionRequest{Address: fx.nftOwner}, 1)
		_, err = expectError(err, codes.NotFound, "NOT_FOUND")
		return err
	})
}

// watchEvents opens a watch of the seeded collection after cursor and returns its first n events.
func (c *clients) watchEvents(cols pb.CollectionServiceClient, cursor string, n int) ([]*pb.CollectionEvent, error) {
	return c.watchCollection(cols, &pb.WatchCollectionRequest{Address: c.fx.collection, Cursor: cursor}, n)
}

// watchCollection reads a watch until n events came (heartbeats are checked and skipped), then closes it.
func (c *clients) watchCollection(cols pb.CollectionServiceClient, req *pb.WatchCollectionRequest, n int) ([]*pb.CollectionEvent, error) {
	ctx, cancel := c.ctx(60 * time.Second)
	defer cancel()
	stream, err := cols.WatchCollection(ctx, req)
	if err != nil {
		return nil, err
	}
	var events []*pb.CollectionEvent
	for len(events) < n {
		msg, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		if hb := msg.GetHeartbeat(); hb != nil {
			continue
		}
		if msg.GetEvent() == nil {
			return nil, errors.New("a message that is neither event nor heartbeat")
		}
		events = append(events, msg.GetEvent())
	}
	return events, nil
}

const floorChanged = pb.CollectionEventKind_COLLECTION_EVENT_KIND_FLOOR_CHANGED

// checkEvent checks one event of collection: its position (sequence, cursor), time, and the fields of its kind.
// The seeded collection's floor moves at every read of the driver's marketplace, so FLOOR_CHANGED events come
// whatever else the localnet's traffic does to the collection.
func checkEvent(ev *pb.CollectionEvent, collection string) error {
	if ev.GetCollection() != collection || ev.GetSequence() == 0 || ev.GetCursor() == "" || ev.GetVerifiedSize() == 0 {
		return fmt.Errorf("collection %s, sequence %d, cursor %q, verified size %d", ev.GetCollection(), ev.GetSequence(), ev.GetCursor(), ev.GetVerifiedSize())
	}
	if err := recent("time", ev.GetTime()); err != nil {
		return err
	}
	switch ev.GetKind() {
	case floorChanged:
		if ev.GetFloorPrice().GetLamports() == 0 || ev.GetPreviousFloorPrice() == nil ||
			ev.GetFloorPrice().GetLamports() == ev.GetPreviousFloorPrice().GetLamports() || ev.GetSlot() != 0 || ev.GetSignature() != "" {
			return fmt.Errorf("a floor change: floor %v after %v, slot %d, signature %q", ev.GetFloorPrice(), ev.GetPreviousFloorPrice(), ev.GetSlot(), ev.GetSignature())
		}
	case pb.CollectionEventKind_COLLECTION_EVENT_KIND_MEMBER_ADDED, pb.CollectionEventKind_COLLECTION_EVENT_KIND_MEMBER_REMOVED,
		pb.CollectionEventKind_COLLECTION_EVENT_KIND_MEMBER_TRANSFERRED:
		if ev.GetSlot() == 0 || ev.GetSignature() == "" || ev.GetAssetId() == "" || ev.GetCommitment() == pb.EventCommitment_EVENT_COMMITMENT_UNSPECIFIED {
			return fmt.Errorf("a %s: slot %d, signature %q, asset %q, commitment %s", ev.GetKind(), ev.GetSlot(), ev.GetSignature(), ev.GetAssetId(), ev.GetCommitment())
		}
	default:
		return fmt.Errorf("kind %s", ev.GetKind())
	}
	return nil
}

// sizeStep is how an event of kind moves the verified size.
func sizeStep(kind pb.CollectionEventKind) int64 {
	switch kind {
	case pb.CollectionEventKind_COLLECTION_EVENT_KIND_MEMBER_ADDED:
		return 1
	case pb.CollectionEventKind_COLLECTION_EVENT_KIND_MEMBER_REMOVED:
		return -1
	}
	return 0
}

// otherEpoch is cursor with its epoch (the log it belongs to) replaced: the same position in a log that is gone.
func otherEpoch(cursor string) (string, error) {
	text, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", fmt.Errorf("cursor %q is not base64url: %w", cursor, err)
	}
	parts := strings.SplitN(string(text), ".", 2)
	if len(parts) != 2 || parts[0] == "gone" {
		return "", fmt.Errorf("cursor %q reads %q", cursor, text)
	}
	return base64.RawURLEncoding.EncodeToString([]byte("gone." + parts[1])), nil
}

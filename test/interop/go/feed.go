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
// marketplace moves at every read (test/interop/harness/market-fixture.ts): FLOOR_CHANGED events in sequence, a
// resume after a cursor, and the refusals.
func (c *clients) feedChecks(s *suite) {
	cols := pb.NewCollectionServiceClient(c.conn)
	fx := c.fx
	var first, second *pb.CollectionEvent
	s.check("feed: WatchCollection streams FLOOR_CHANGED events in sequence, each with a cursor and the verified size", func() error {
		events, err := c.watchEvents(cols, "", 2)
		if err != nil {
			return err
		}
		for i, ev := range events {
			switch {
			case ev.GetCollection() != fx.collection:
				return fmt.Errorf("event %d of collection %s", i, ev.GetCollection())
			case ev.GetKind() != pb.CollectionEventKind_COLLECTION_EVENT_KIND_FLOOR_CHANGED:
				return fmt.Errorf("event %d is %s", i, ev.GetKind())
			case ev.GetSequence() == 0 || ev.GetCursor() == "":
				return fmt.Errorf("event %d: sequence %d, cursor %q", i, ev.GetSequence(), ev.GetCursor())
			case ev.GetVerifiedSize() != fx.collectionCount:
				return fmt.Errorf("event %d: verified size %d, want %d", i, ev.GetVerifiedSize(), fx.collectionCount)
			case ev.GetFloorPrice().GetLamports() == 0 || ev.GetPreviousFloorPrice() == nil ||
				ev.GetFloorPrice().GetLamports() == ev.GetPreviousFloorPrice().GetLamports():
				return fmt.Errorf("event %d: floor %v after %v", i, ev.GetFloorPrice(), ev.GetPreviousFloorPrice())
			case ev.GetSlot() != 0 || ev.GetSignature() != "":
				return fmt.Errorf("event %d: a floor change with slot %d, signature %q", i, ev.GetSlot(), ev.GetSignature())
			}
			if err := recent("time", ev.GetTime()); err != nil {
				return err
			}
		}
		if events[1].GetSequence() != events[0].GetSequence()+1 {
			return fmt.Errorf("sequences %d then %d", events[0].GetSequence(), events[1].GetSequence())
		}
		if events[1].GetPreviousFloorPrice().GetLamports() != events[0].GetFloorPrice().GetLamports() {
			return fmt.Errorf("the second event's previous floor %d is not the first's floor %d",
				events[1].GetPreviousFloorPrice().GetLamports(), events[0].GetFloorPrice().GetLamports())
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
		if got.GetSequence() != first.GetSequence()+1 || got.GetCursor() != second.GetCursor() ||
			got.GetFloorPrice().GetLamports() != second.GetFloorPrice().GetLamports() {
			return fmt.Errorf("resumed at sequence %d (floor %d), want %d (floor %d)", got.GetSequence(),
				got.GetFloorPrice().GetLamports(), second.GetSequence(), second.GetFloorPrice().GetLamports())
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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"connectrpc.com/connect"

	solgate "github.com/solgate/solgate/clients/go"
	solgatev1 "github.com/solgate/solgate/clients/go/solgate/v1"
)

// savedCursor is what is kept between runs, as one line `<sequence> <cursor>`: the cursor of the last event
// handled, and its sequence (to show where the stream resumes).
type savedCursor struct {
	sequence uint64
	cursor   string
}

// feed follows a collection's change feed (`example feed`) and picks up where it left off: after handling each
// event it saves the event's cursor to SOLGATE_CURSOR_FILE (default collection-cursor); started again, it
// passes the saved cursor and the stream resumes right after the last event handled, with what came while it was
// stopped first. It stops after SOLGATE_EVENTS events (default 3). A cursor older than the feed's log is refused
// (COLLECTION_CURSOR_EXPIRED): then it re-reads the collection and watches from now.
func feed(ctx context.Context) error {
	clients, err := solgate.New(env("SOLGATE_URL", ""), env("SOLGATE_API_KEY", ""), solgate.Options{Protocol: solgate.ProtocolGRPC})
	if err != nil {
		return err
	}
	collection := env("SOLGATE_COLLECTION", "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ")
	file := env("SOLGATE_CURSOR_FILE", "collection-cursor")
	wanted, err := strconv.Atoi(env("SOLGATE_EVENTS", "3"))
	if err != nil || wanted < 1 {
		return fmt.Errorf("SOLGATE_EVENTS is not a positive number")
	}

	var saved *savedCursor
	if text, err := os.ReadFile(file); err == nil {
		saved = &savedCursor{}
		if _, err := fmt.Sscanf(string(text), "%d %s", &saved.sequence, &saved.cursor); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		fmt.Printf("feed: resuming after sequence %d\n", saved.sequence)
	} else {
		fmt.Println("feed: no saved cursor, watching from now")
	}
	err = watchFeed(ctx, clients, collection, file, saved, wanted)
	if saved != nil && solgate.ErrorReason(err) == "COLLECTION_CURSOR_EXPIRED" {
		// The log no longer holds what followed the cursor (too old, or the gateway restarted): start over from the
		// collection's current state, then follow it from now.
		res, err := clients.Collection.GetCollection(ctx, connect.NewRequest(&solgatev1.GetCollectionRequest{Address: collection}))
		if err != nil {
			return err
		}
		fmt.Printf("feed: the saved cursor is gone; re-read the collection (%d verified), watching from now\n", res.Msg.GetCollection().GetItemCount())
		if err := os.Remove(file); err != nil {
			return err
		}
		return watchFeed(ctx, clients, collection, file, nil, wanted)
	}
	return err
}

// watchFeed handles `wanted` events after `saved` (from now when nil), saving each one's cursor once handled.
func watchFeed(ctx context.Context, clients *solgate.Clients, collection, file string, saved *savedCursor, wanted int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	request := &solgatev1.WatchCollectionRequest{Address: collection}
	if saved != nil {
		request.Cursor = saved.cursor
	}
	stream, err := clients.Collection.WatchCollection(ctx, connect.NewRequest(request))
	if err != nil {
		return err
	}
	defer stream.Close()
	handled := 0
	var last *solgatev1.CollectionEvent
	for handled < wanted && stream.Receive() {
		event := stream.Msg().GetEvent() // nil for a heartbeat: the stream is alive, nothing changed
		if event == nil {
			continue
		}
		if handled == 0 && saved != nil {
			fmt.Printf("feed: resumed at sequence %d\n", event.GetSequence())
			// Without a kinds filter the log has no gaps: the first event after the cursor is the next one.
			if event.GetSequence() != saved.sequence+1 {
				return fmt.Errorf("resumed at %d, not right after %d", event.GetSequence(), saved.sequence)
			}
		}
		handle(event)
		if err := saveCursor(file, event); err != nil {
			return err
		}
		last = event
		handled++
	}
	if handled < wanted {
		if err := stream.Err(); err != nil {
			return err
		}
		return errors.New("the stream ended")
	}
	fmt.Printf("feed: handled %d events, last sequence %d, cursor saved to %s\n", handled, last.GetSequence(), file)
	return nil
}

// handle is what the application does with a change: here, print it.
func handle(event *solgatev1.CollectionEvent) {
	what := fmt.Sprintf("%s owner %s (%s in %s)", event.GetAssetId(), event.GetOwner(), event.GetInstruction(), event.GetSignature())
	if event.GetKind() == solgatev1.CollectionEventKind_COLLECTION_EVENT_KIND_FLOOR_CHANGED {
		what = fmt.Sprintf("floor %g SOL (was %g)", event.GetFloorPrice().GetSol(), event.GetPreviousFloorPrice().GetSol())
	}
	fmt.Printf("event %d %s: %s; verified size %d\n", event.GetSequence(), event.GetKind(), what, event.GetVerifiedSize())
}

// saveCursor writes the event's cursor once it is handled, atomically: a crash mid-write must not lose the old one.
func saveCursor(file string, event *solgatev1.CollectionEvent) error {
	text := fmt.Sprintf("%d %s\n", event.GetSequence(), event.GetCursor())
	if err := os.WriteFile(file+".tmp", []byte(text), 0o600); err != nil {
		return err
	}
	return os.Rename(file+".tmp", file)
}

package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// bundleChecks covers TransactionService's bundle RPCs: sign a tipped draft here, send it as a
// one-transaction bundle, follow it with WatchBundle until it is confirmed, read it back with
// GetBundleStatus, and the refusals of each RPC.
func (c *clients) bundleChecks(s *suite) {
	if c.pending("TransactionService") {
		return
	}
	txs := pb.NewTransactionServiceClient(c.conn)
	var signed []byte
	var signature, bundleID string
	var final *pb.BundleStatusRecord
	s.check("bundle: SendBundle of a signed, tipped transaction answers Jito's id, PENDING", func() error {
		wire, sig, err := signWire(c.fx.bundleTx, c.fx.payerSeed)
		if err != nil {
			return err
		}
		signed, signature = wire, base58(sig)
		ctx, cancel := c.ctx(30 * time.Second)
		defer cancel()
		res, err := txs.SendBundle(ctx, &pb.SendBundleRequest{Transactions: [][]byte{signed}})
		if err != nil {
			return err
		}
		b := res.GetBundle()
		if want := sha256Hex(signature); b.GetBundleId() != want {
			return fmt.Errorf("bundle_id %s, want sha256(%s) = %s", b.GetBundleId(), signature, want)
		}
		if b.GetStatus() != pb.BundleStatus_BUNDLE_STATUS_PENDING || len(b.GetSignatures()) != 1 || b.GetSignatures()[0] != signature {
			return fmt.Errorf("record %v", b)
		}
		bundleID = b.GetBundleId()
		return nil
	})
	s.check("bundle: WatchBundle streams the record until the bundle is confirmed, its transaction in a slot", func() error {
		if bundleID == "" {
			return errors.New("nothing sent")
		}
		ctx, cancel := c.ctx(60 * time.Second)
		defer cancel()
		stream, err := txs.WatchBundle(ctx, &pb.WatchBundleRequest{BundleId: bundleID})
		if err != nil {
			return err
		}
		for {
			res, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			b := res.GetBundle()
			if b == nil {
				continue // a heartbeat
			}
			switch b.GetStatus() {
			case pb.BundleStatus_BUNDLE_STATUS_CONFIRMED, pb.BundleStatus_BUNDLE_STATUS_FINALIZED:
				final = b
			case pb.BundleStatus_BUNDLE_STATUS_FAILED, pb.BundleStatus_BUNDLE_STATUS_INVALID, pb.BundleStatus_BUNDLE_STATUS_EXPIRED:
				return fmt.Errorf("the bundle will never land: %s (%s)", b.GetStatus(), b.GetReason())
			}
			if final != nil {
				break
			}
		}
		if final == nil {
			return errors.New("the watch ended before the bundle was confirmed")
		}
		if len(final.GetTransactions()) != 1 || final.GetTransactions()[0].GetSignature() != signature || final.GetTransactions()[0].GetSlot() == 0 {
			return fmt.Errorf("transactions %v", final.GetTransactions())
		}
		return nil
	})
	s.check("bundle: GetBundleStatus agrees with the watch", func() error {
		if final == nil {
			return errors.New("no confirmed record")
		}
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := txs.GetBundleStatus(ctx, &pb.GetBundleStatusRequest{BundleId: bundleID})
		if err != nil {
			return err
		}
		b := res.GetBundle()
		if b.GetStatus() != pb.BundleStatus_BUNDLE_STATUS_CONFIRMED && b.GetStatus() != pb.BundleStatus_BUNDLE_STATUS_FINALIZED {
			return fmt.Errorf("status %s", b.GetStatus())
		}
		if b.GetSlot() != final.GetSlot() {
			return fmt.Errorf("slot %d, the watch said %d", b.GetSlot(), final.GetSlot())
		}
		return nil
	})
	s.check("bundle: SendBundle of six transactions is InvalidArgument BUNDLE_TOO_LARGE", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		six := [][]byte{c.fx.draftTx, c.fx.draftTx, c.fx.draftTx, c.fx.draftTx, c.fx.draftTx, c.fx.draftTx}
		_, err := txs.SendBundle(ctx, &pb.SendBundleRequest{Transactions: six})
		_, err = expectError(err, codes.InvalidArgument, "BUNDLE_TOO_LARGE")
		return err
	})
	s.check("bundle: SendBundle of an unsigned transaction is InvalidArgument INVALID_TRANSACTION", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := txs.SendBundle(ctx, &pb.SendBundleRequest{Transactions: [][]byte{c.fx.bundleTx}})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_TRANSACTION")
		return err
	})
	s.check("bundle: GetBundleStatus of an unknown id is NotFound NOT_FOUND", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := txs.GetBundleStatus(ctx, &pb.GetBundleStatusRequest{BundleId: sha256Hex("unknown")})
		_, err = expectError(err, codes.NotFound, "NOT_FOUND")
		return err
	})
	s.check("bundle: WatchBundle of a malformed id ends the stream with INVALID_PARAMETER", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		stream, err := txs.WatchBundle(ctx, &pb.WatchBundleRequest{BundleId: "not-an-id"})
		if err == nil {
			_, err = stream.Recv()
		}
		_, err = expectError(err, codes.InvalidArgument, "INVALID_PARAMETER")
		return err
	})
}

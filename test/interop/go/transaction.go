package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// An unknown but well-formed signature: 64 zero bytes.
var zeroSignature = base58(make([]byte, 64))

// transactionChecks covers TransactionService: prepare a draft, sign it here, send it, follow it
// with WatchStatus to the end of the stream, read its status, and the errors of each RPC.
func (c *clients) transactionChecks(s *suite) {
	txs := pb.NewTransactionServiceClient(c.conn)
	if c.pending("TransactionService") {
		s.check("transaction: PrepareTransaction is Unimplemented (TODO: TransactionService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := txs.PrepareTransaction(ctx, &pb.PrepareTransactionRequest{Transaction: c.fx.draftTx})
			return expectUnimplemented(err)
		})
		s.check("transaction: SendTransaction is Unimplemented (TODO: TransactionService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := txs.SendTransaction(ctx, &pb.SendTransactionRequest{Transaction: c.fx.draftTx})
			return expectUnimplemented(err)
		})
		s.check("transaction: GetTransactionStatus is Unimplemented (TODO: TransactionService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := txs.GetTransactionStatus(ctx, &pb.GetTransactionStatusRequest{Signature: zeroSignature})
			return expectUnimplemented(err)
		})
		s.check("transaction: WatchStatus is Unimplemented (TODO: TransactionService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			stream, err := txs.WatchStatus(ctx, &pb.WatchStatusRequest{Signature: zeroSignature})
			if err == nil {
				_, err = stream.Recv()
			}
			return expectUnimplemented(err)
		})
		return
	}

	var prepared *pb.PrepareTransactionResponse
	var signature string
	var sent *pb.SendResult
	s.check("transaction: PrepareTransaction sets a blockhash, a compute budget and the expected fee", func() error {
		ctx, cancel := c.ctx(30 * time.Second)
		defer cancel()
		auto := &pb.PriorityFee{Choice: &pb.PriorityFee_Level{Level: pb.PriorityLevel_PRIORITY_LEVEL_AUTO}}
		res, err := txs.PrepareTransaction(ctx, &pb.PrepareTransactionRequest{Transaction: c.fx.draftTx, PriorityFee: auto})
		if err != nil {
			return err
		}
		if len(res.GetTransaction()) == 0 || res.GetBlockhash() == "" || res.GetLastValidBlockHeight() == 0 || res.GetComputeUnitLimit() == 0 {
			return fmt.Errorf("incomplete: %d bytes, blockhash %q, last valid %d, limit %d",
				len(res.GetTransaction()), res.GetBlockhash(), res.GetLastValidBlockHeight(), res.GetComputeUnitLimit())
		}
		priority := (res.GetComputeUnitPrice()*uint64(res.GetComputeUnitLimit()) + 999_999) / 1_000_000
		if want := 5000 + priority; res.GetExpectedFee().GetLamports() != want {
			return fmt.Errorf("expected_fee %d, want 5000 + ceil(%d * %d / 1e6) = %d",
				res.GetExpectedFee().GetLamports(), res.GetComputeUnitPrice(), res.GetComputeUnitLimit(), want)
		}
		if err := checkEstimate(res.GetEstimate(), 1); err != nil {
			return fmt.Errorf("estimate: %w", err)
		}
		prepared = res
		return nil
	})
	s.check("transaction: PrepareTransaction sets an exact micro-lamports price beyond 32 bits (oneof)", func() error {
		ctx, cancel := c.ctx(30 * time.Second)
		defer cancel()
		const price = uint64(5_000_000_007)
		exact := &pb.PriorityFee{Choice: &pb.PriorityFee_MicroLamports{MicroLamports: price}}
		res, err := txs.PrepareTransaction(ctx, &pb.PrepareTransactionRequest{Transaction: c.fx.draftTx, PriorityFee: exact})
		if err != nil {
			return err
		}
		if res.GetComputeUnitPrice() != price {
			return fmt.Errorf("compute_unit_price %d, want %d", res.GetComputeUnitPrice(), price)
		}
		return nil
	})
	s.check("transaction: SendTransaction of the signed draft answers its signature and price", func() error {
		if prepared == nil {
			return errors.New("nothing prepared")
		}
		signed, sig, err := signWire(prepared.GetTransaction(), c.fx.payerSeed)
		if err != nil {
			return err
		}
		ctx, cancel := c.ctx(30 * time.Second)
		defer cancel()
		confirm := false
		res, err := txs.SendTransaction(ctx, &pb.SendTransactionRequest{Transaction: signed, Confirm: &confirm})
		if err != nil {
			return err
		}
		r := res.GetResult()
		signature = base58(sig)
		switch {
		case r.GetSignature() != signature:
			return fmt.Errorf("signature %s, want %s", r.GetSignature(), signature)
		case r.GetStatus() == pb.TransactionStatus_TRANSACTION_STATUS_FAILED || r.GetStatus() == pb.TransactionStatus_TRANSACTION_STATUS_EXPIRED ||
			r.GetStatus() == pb.TransactionStatus_TRANSACTION_STATUS_UNSPECIFIED:
			return fmt.Errorf("status %s", r.GetStatus())
		case r.GetComputeUnitPrice() != prepared.GetComputeUnitPrice():
			return fmt.Errorf("compute_unit_price %d, prepared %d", r.GetComputeUnitPrice(), prepared.GetComputeUnitPrice())
		case r.GetLastValidBlockHeight() != prepared.GetLastValidBlockHeight():
			return fmt.Errorf("last_valid_block_height %d, prepared %d", r.GetLastValidBlockHeight(), prepared.GetLastValidBlockHeight())
		}
		sent = r
		return nil
	})
	var final *pb.TransactionStatusRecord
	s.check("transaction: WatchStatus streams records in order until the stream ends finalized", func() error {
		if sent == nil {
			return errors.New("nothing sent")
		}
		ctx, cancel := c.ctx(120 * time.Second)
		defer cancel()
		stream, err := txs.WatchStatus(ctx, &pb.WatchStatusRequest{Signature: signature})
		if err != nil {
			return err
		}
		var last *pb.TransactionStatusRecord
		events, heartbeats := 0, 0
		for {
			ev, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("after %d events: %w", events, err)
			}
			events++
			if hb := ev.GetHeartbeat(); hb != nil {
				heartbeats++
				continue
			}
			rec := ev.GetRecord()
			if rec == nil {
				return fmt.Errorf("event %d is neither record nor heartbeat", events)
			}
			if rec.GetSignature() != signature {
				return fmt.Errorf("record for %s", rec.GetSignature())
			}
			if err := recent("updated_at", rec.GetUpdatedAt()); err != nil {
				return err
			}
			if last != nil && rec.GetStatus() < last.GetStatus() {
				return fmt.Errorf("status went back from %s to %s", last.GetStatus(), rec.GetStatus())
			}
			last = rec
		}
		if last == nil {
			return errors.New("stream ended without a record")
		}
		if last.GetStatus() != pb.TransactionStatus_TRANSACTION_STATUS_FINALIZED {
			return fmt.Errorf("ended at %s (%v)", last.GetStatus(), last.GetError())
		}
		if last.Slot == nil || last.GetSlot() == 0 {
			return errors.New("finalized without a slot")
		}
		if fee := last.GetFee(); fee.GetLamports() != prepared.GetExpectedFee().GetLamports() || math.Abs(fee.GetSol()-float64(fee.GetLamports())/1e9) > 1e-12 {
			return fmt.Errorf("fee %v, want %d lamports", fee, prepared.GetExpectedFee().GetLamports())
		}
		final = last
		fmt.Printf("  (watch: %d events, %d heartbeats, finalized in slot %d)\n", events, heartbeats, last.GetSlot())
		return nil
	})
	s.check("transaction: GetTransactionStatus agrees with the end of the watch", func() error {
		if final == nil {
			return errors.New("no final record")
		}
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := txs.GetTransactionStatus(ctx, &pb.GetTransactionStatusRequest{Signature: signature})
		if err != nil {
			return err
		}
		r := res.GetRecord()
		if r.GetStatus() != final.GetStatus() || r.GetSlot() != final.GetSlot() || r.GetFee().GetLamports() != final.GetFee().GetLamports() {
			return fmt.Errorf("record %v, watch ended with %v", r, final)
		}
		return nil
	})
	s.check("transaction: SendTransaction of garbage is InvalidArgument INVALID_TRANSACTION", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := txs.SendTransaction(ctx, &pb.SendTransactionRequest{Transaction: []byte{1, 2, 3}})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_TRANSACTION")
		return err
	})
	s.check("transaction: PrepareTransaction of garbage is InvalidArgument INVALID_TRANSACTION", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := txs.PrepareTransaction(ctx, &pb.PrepareTransactionRequest{Transaction: []byte{1, 2, 3}})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_TRANSACTION")
		return err
	})
	s.check("transaction: GetTransactionStatus of a malformed signature is InvalidArgument INVALID_PARAMETER", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := txs.GetTransactionStatus(ctx, &pb.GetTransactionStatusRequest{Signature: "not-a-signature"})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_PARAMETER")
		return err
	})
	s.check("transaction: WatchStatus of a malformed signature ends the stream with INVALID_PARAMETER", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		stream, err := txs.WatchStatus(ctx, &pb.WatchStatusRequest{Signature: "not-a-signature"})
		if err == nil {
			_, err = stream.Recv()
		}
		_, err = expectError(err, codes.InvalidArgument, "INVALID_PARAMETER")
		return err
	})
}

package main

import (
	"crypto/ed25519"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// feeChecks covers FeeService.GetFees and EstimateFees.
func (c *clients) feeChecks(s *suite) {
	fees := pb.NewFeeServiceClient(c.conn)
	if c.pending("FeeService") {
		s.check("fee: GetFees is Unimplemented (TODO: FeeService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := fees.GetFees(ctx, &pb.GetFeesRequest{})
			return expectUnimplemented(err)
		})
		s.check("fee: EstimateFees is Unimplemented (TODO: FeeService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := fees.EstimateFees(ctx, &pb.EstimateFeesRequest{Transaction: c.fx.draftTx})
			return expectUnimplemented(err)
		})
		return
	}
	s.check("fee: GetFees decodes base fee, source enum, levels and timestamp", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := fees.GetFees(ctx, &pb.GetFeesRequest{})
		if err != nil {
			return err
		}
		return checkEstimate(res.GetEstimate(), 1)
	})
	s.check("fee: WatchFees streams an estimate at once, with the invariants of GetFees", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		stream, err := fees.WatchFees(ctx, &pb.WatchFeesRequest{})
		if err != nil {
			return err
		}
		first, err := stream.Recv()
		if err != nil {
			return err
		}
		if first.GetEstimate() == nil {
			return fmt.Errorf("the first message is not an estimate: %v", first)
		}
		return checkEstimate(first.GetEstimate(), 1)
	})
	s.check("fee: EstimateFees counts signatures and names the payer among writable accounts", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := fees.EstimateFees(ctx, &pb.EstimateFeesRequest{Transaction: c.fx.draftTx})
		if err != nil {
			return err
		}
		est := res.GetEstimate()
		if err := checkEstimate(est, 1); err != nil {
			return err
		}
		payer := base58(ed25519.NewKeyFromSeed(c.fx.payerSeed).Public().(ed25519.PublicKey))
		if !slices.Contains(est.GetWritableAccounts(), payer) {
			return fmt.Errorf("writable_accounts %v lack the payer %s", est.GetWritableAccounts(), payer)
		}
		return nil
	})
	s.check("fee: EstimateFees of garbage is InvalidArgument INVALID_TRANSACTION", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := fees.EstimateFees(ctx, &pb.EstimateFeesRequest{Transaction: []byte{1, 2, 3}})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_TRANSACTION")
		return err
	})
	s.check("fee: an unknown chain is NotFound UNKNOWN_CHAIN", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := fees.GetFees(ctx, &pb.GetFeesRequest{Chain: "no-such-chain"})
		_, err = expectError(err, codes.NotFound, "UNKNOWN_CHAIN")
		return err
	})
}

// checkEstimate checks the invariants every fee estimate keeps.
func checkEstimate(est *pb.FeeEstimate, signatures uint64) error {
	if est == nil {
		return fmt.Errorf("estimate absent")
	}
	base := est.GetBaseFee()
	if base.GetLamportsPerSignature() != 5000 || base.GetSignatures() != signatures || base.GetLamports() != 5000*signatures {
		return fmt.Errorf("base fee %d x %d = %d, want 5000 x %d", base.GetLamportsPerSignature(), base.GetSignatures(), base.GetLamports(), signatures)
	}
	if err := recent("updated_at", est.GetUpdatedAt()); err != nil {
		return err
	}
	switch est.GetSource() {
	case pb.FeeSource_FEE_SOURCE_BLOCKS, pb.FeeSource_FEE_SOURCE_RECENT_PRIORITIZATION_FEES:
		p := est.GetPriority()
		if p == nil {
			return fmt.Errorf("source %s without priority levels", est.GetSource())
		}
		if p.GetUnit() != "microLamportsPerComputeUnit" {
			return fmt.Errorf("unit %q", p.GetUnit())
		}
		if !(p.GetLow() <= p.GetMedium() && p.GetMedium() <= p.GetHigh() && p.GetHigh() <= p.GetVeryHigh()) {
			return fmt.Errorf("levels out of order: %v", p)
		}
	case pb.FeeSource_FEE_SOURCE_NONE:
		if est.GetPriority() != nil {
			return fmt.Errorf("source NONE with levels %v", est.GetPriority())
		}
	default:
		return fmt.Errorf("source %s", est.GetSource())
	}
	if est.GetWindowSlots() == 0 {
		return fmt.Errorf("window_slots 0")
	}
	return nil
}

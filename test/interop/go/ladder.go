package main

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// ladderChecks covers the fee ladder's five RPCs: a nonce account made through the gateway, a ladder planned on
// it, signed here, sent, watched to its end and read back; a second one cancelled while the localnet is frozen
// and made final by the client's own AdvanceNonceAccount (no rung may land); and the refusals.
func (c *clients) ladderChecks(s *suite) {
	txs := pb.NewTransactionServiceClient(c.conn)
	payer := ed25519.NewKeyFromSeed(c.fx.payerSeed)

	var nonce string
	var plan *pb.PrepareLadderResponse
	s.check("ladder: PrepareLadder plans rising rungs on a new nonce account, each advancing it first with its value as blockhash", func() error {
		var err error
		if nonce, err = c.createNonceAccount(txs, payer); err != nil {
			return fmt.Errorf("nonce account: %w", err)
		}
		if plan, err = c.prepareLadder(txs, payer, nonce, 3); err != nil {
			return err
		}
		return checkPlan(plan, 3)
	})

	var ids []string
	var sentRungs []string
	s.check("ladder: SendLadder takes the signed rungs and submits the cheapest first", func() error {
		if plan == nil {
			return errors.New("nothing planned")
		}
		signed, sigs, err := signRungs(plan, payer)
		if err != nil {
			return err
		}
		ctx, cancel := c.ctx(30 * time.Second)
		defer cancel()
		res, err := txs.SendLadder(ctx, &pb.SendLadderRequest{Transactions: signed})
		if err != nil {
			return err
		}
		l := res.GetLadder()
		if err := checkRungSignatures(l, sigs); err != nil {
			return err
		}
		switch {
		case l.GetId() == "" || l.GetNonceAccount() != nonce:
			return fmt.Errorf("id %q, nonce account %s (want %s)", l.GetId(), l.GetNonceAccount(), nonce)
		case l.GetStatus() == pb.LadderStatus_LADDER_STATUS_UNSPECIFIED || l.GetStatus() >= pb.LadderStatus_LADDER_STATUS_FAILED:
			return fmt.Errorf("status %s right after sending", l.GetStatus())
		case l.GetRungs()[0].GetState() != pb.RungState_RUNG_STATE_SUBMITTED && l.GetRungs()[0].GetState() != pb.RungState_RUNG_STATE_LANDED:
			return fmt.Errorf("the cheapest rung is %s", l.GetRungs()[0].GetState())
		case l.GetDeadlineSlot() <= l.GetFirstSlot():
			return fmt.Errorf("deadline slot %d, first slot %d", l.GetDeadlineSlot(), l.GetFirstSlot())
		}
		ids, sentRungs = append(ids, l.GetId()), sigs
		return nil
	})

	var final *pb.LadderRecord
	s.check("ladder: WatchLadder streams the record, never going back, until it ends finalized with one rung landed", func() error {
		if len(ids) == 0 {
			return errors.New("nothing sent")
		}
		end, events, err := c.watchLadder(txs, ids[0])
		if err != nil {
			return err
		}
		if end.GetStatus() != pb.LadderStatus_LADDER_STATUS_FINALIZED {
			return fmt.Errorf("ended %s (%v)", end.GetStatus(), end.GetError())
		}
		landed := 0
		for _, r := range end.GetRungs() {
			if r.GetState() == pb.RungState_RUNG_STATE_LANDED {
				landed++
			}
		}
		i := end.GetLandedRung()
		switch {
		case end.LandedRung == nil || landed != 1 || int(i) >= len(sentRungs) || end.GetRungs()[i].GetState() != pb.RungState_RUNG_STATE_LANDED:
			return fmt.Errorf("landed rung %v, %d rungs in state LANDED", end.LandedRung, landed)
		case end.GetSignature() != sentRungs[i]:
			return fmt.Errorf("signature %s, rung %d was signed %s", end.GetSignature(), i, sentRungs[i])
		case end.GetSlot() == 0 || end.GetPriceLanded() != plan.GetRungs()[i].GetPrice():
			return fmt.Errorf("slot %d, price landed %d (rung %d planned at %d)", end.GetSlot(), end.GetPriceLanded(), i, plan.GetRungs()[i].GetPrice())
		case end.GetFeePaidLamports() != plan.GetRungs()[i].GetFeeLamports():
			return fmt.Errorf("fee paid %d, rung %d planned at %d lamports", end.GetFeePaidLamports(), i, plan.GetRungs()[i].GetFeeLamports())
		case end.SlotsToLand == nil:
			return errors.New("no slots_to_land")
		}
		if err := recent("updated_at", end.GetUpdatedAt()); err != nil {
			return err
		}
		final = end
		fmt.Printf("  (ladder: %d records, rung %d landed in slot %d, %d slots after the first submission)\n", events, i, end.GetSlot(), end.GetSlotsToLand())
		return nil
	})

	s.check("ladder: GetLadderStatus agrees with the end of the watch", func() error {
		if final == nil {
			return errors.New("no final record")
		}
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := txs.GetLadderStatus(ctx, &pb.GetLadderStatusRequest{Id: ids[0]})
		if err != nil {
			return err
		}
		l := res.GetLadder()
		if l.GetStatus() != final.GetStatus() || l.GetLandedRung() != final.GetLandedRung() || l.GetSlot() != final.GetSlot() ||
			l.GetSignature() != final.GetSignature() || l.GetFeePaidLamports() != final.GetFeePaidLamports() {
			return fmt.Errorf("record %v, the watch ended with %v", l, final)
		}
		return nil
	})

	var second *pb.PrepareLadderResponse
	s.check("ladder: CancelLadder stops a climb; the client's own AdvanceNonceAccount then ends it CANCELLED with no rung on chain", func() error {
		nonce, err := c.createNonceAccount(txs, payer)
		if err != nil {
			return fmt.Errorf("nonce account: %w", err)
		}
		if second, err = c.prepareLadder(txs, payer, nonce, 3); err != nil {
			return err
		}
		signed, sigs, err := signRungs(second, payer)
		if err != nil {
			return err
		}
		// The client's advance is itself a nonce transaction on the same value, paying more than any rung: it
		// goes first when blocks resume, and the rung already submitted can then never land.
		top := second.GetRungs()[len(second.GetRungs())-1].GetPrice()
		advance, advanceSig, err := advanceNonceTx(payer, nonce, second.GetNonce(), 2*top+1_000_000)
		if err != nil {
			return err
		}
		// Frozen, the first rung waits in the localnet's queue, so the cancel finds the ladder pending.
		if err := c.localnet("localnet_setFaults", map[string]any{"freeze": true}, nil); err != nil {
			return fmt.Errorf("freeze: %w", err)
		}
		id, cancelErr := func() (string, error) {
			defer c.localnet("localnet_setFaults", map[string]any{"freeze": false}, nil) //nolint:errcheck
			ctx, cancel := c.ctx(30 * time.Second)
			defer cancel()
			sent, err := txs.SendLadder(ctx, &pb.SendLadderRequest{Transactions: signed})
			if err != nil {
				return "", fmt.Errorf("SendLadder: %w", err)
			}
			res, err := txs.CancelLadder(ctx, &pb.CancelLadderRequest{Id: sent.GetLadder().GetId()})
			if err != nil {
				return "", fmt.Errorf("CancelLadder: %w", err)
			}
			if res.GetLadder().GetStatus() != pb.LadderStatus_LADDER_STATUS_CANCELLED {
				return "", fmt.Errorf("CancelLadder answered %s", res.GetLadder().GetStatus())
			}
			var sig string
			return sent.GetLadder().GetId(), c.localnet("sendTransaction",
				[]any{base64Std(advance), map[string]any{"encoding": "base64", "skipPreflight": true}}, &sig)
		}()
		if cancelErr != nil {
			return cancelErr
		}
		end, _, err := c.watchLadder(txs, id)
		if err != nil {
			return err
		}
		if end.GetStatus() != pb.LadderStatus_LADDER_STATUS_CANCELLED || end.LandedRung != nil {
			return fmt.Errorf("ended %s, landed rung %v", end.GetStatus(), end.LandedRung)
		}
		for i, r := range end.GetRungs() {
			if r.GetState() != pb.RungState_RUNG_STATE_DEAD {
				return fmt.Errorf("rung %d is %s", i, r.GetState())
			}
		}
		// On chain: the advance, and none of the rungs.
		landed, err := c.onChain(append([]string{advanceSig}, sigs...))
		if err != nil {
			return err
		}
		if !landed[0] {
			return errors.New("the client's advance is not on chain")
		}
		for i, l := range landed[1:] {
			if l {
				return fmt.Errorf("rung %d is on chain", i)
			}
		}
		return nil
	})

	s.check("ladder: SendLadder of two rungs at one price is InvalidArgument LADDER_PRICES_NOT_RISING, nothing sent", func() error {
		if second == nil {
			return errors.New("nothing planned")
		}
		signed, _, err := signRungs(second, payer)
		if err != nil {
			return err
		}
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err = txs.SendLadder(ctx, &pb.SendLadderRequest{Transactions: [][]byte{signed[0], signed[0]}})
		_, err = expectError(err, codes.InvalidArgument, "LADDER_PRICES_NOT_RISING")
		return err
	})
	s.check("ladder: PrepareLadder on an account that is no nonce is FailedPrecondition NONCE_ACCOUNT_INVALID", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		to := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
		_, err := txs.PrepareLadder(ctx, &pb.PrepareLadderRequest{
			Transaction:  transferDraft(payer.Public().(ed25519.PublicKey), to, 1_000_000),
			NonceAccount: base58(payer.Public().(ed25519.PublicKey)),
		})
		_, err = expectError(err, codes.FailedPrecondition, "NONCE_ACCOUNT_INVALID")
		return err
	})
	s.check("ladder: GetLadderStatus, WatchLadder and CancelLadder of an unknown ladder are NotFound NOT_FOUND", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		unknown := base58(append([]byte{7}, make([]byte, 63)...))
		if _, err := expectError(func() error {
			_, err := txs.GetLadderStatus(ctx, &pb.GetLadderStatusRequest{Id: unknown})
			return err
		}(), codes.NotFound, "NOT_FOUND"); err != nil {
			return fmt.Errorf("GetLadderStatus: %w", err)
		}
		if _, err := expectError(func() error {
			_, err := txs.CancelLadder(ctx, &pb.CancelLadderRequest{Id: unknown})
			return err
		}(), codes.NotFound, "NOT_FOUND"); err != nil {
			return fmt.Errorf("CancelLadder: %w", err)
		}
		stream, err := txs.WatchLadder(ctx, &pb.WatchLadderRequest{Id: unknown})
		if err == nil {
			_, err = stream.Recv()
		}
		if _, err := expectError(err, codes.NotFound, "NOT_FOUND"); err != nil {
			return fmt.Errorf("WatchLadder: %w", err)
		}
		return nil
	})
}

// createNonceAccount makes a durable nonce account whose authority is the payer, through the gateway
// (PrepareTransaction, then SendTransaction waiting for confirmation), and returns its address.
func (c *clients) createNonceAccount(txs pb.TransactionServiceClient, payer ed25519.PrivateKey) (string, error) {
	noncePub, nonceKey, err := ed25519.GenerateKey(nil)
	if err != nil {
		return "", err
	}
	ctx, cancel := c.ctx(60 * time.Second)
	defer cancel()
	prepared, err := txs.PrepareTransaction(ctx, &pb.PrepareTransactionRequest{
		Transaction: nonceAccountDraft(payer.Public().(ed25519.PublicKey), noncePub),
	})
	if err != nil {
		return "", err
	}
	signed, err := signAll(prepared.GetTransaction(), payer, nonceKey)
	if err != nil {
		return "", err
	}
	confirm := true
	res, err := txs.SendTransaction(ctx, &pb.SendTransactionRequest{Transaction: signed, Confirm: &confirm})
	if err != nil {
		return "", err
	}
	if st := res.GetResult().GetStatus(); st != pb.TransactionStatus_TRANSACTION_STATUS_CONFIRMED && st != pb.TransactionStatus_TRANSACTION_STATUS_FINALIZED {
		return "", fmt.Errorf("the nonce account's creation is %s", st)
	}
	return base58(noncePub), nil
}

// prepareLadder plans a ladder of n rungs for a transfer from the payer to a new address.
func (c *clients) prepareLadder(txs pb.TransactionServiceClient, payer ed25519.PrivateKey, nonce string, n uint32) (*pb.PrepareLadderResponse, error) {
	to, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.ctx(30 * time.Second)
	defer cancel()
	deadline := uint32(20)
	return txs.PrepareLadder(ctx, &pb.PrepareLadderRequest{
		Transaction:   transferDraft(payer.Public().(ed25519.PublicKey), to, 1_000_000),
		NonceAccount:  nonce,
		Rungs:         &n,
		DeadlineSlots: &deadline,
	})
}

// checkPlan checks a plan: n rungs at strictly rising prices and fees, odds in (0, 1], send slots from the plan's
// slot on, and every rung a nonce transaction (AdvanceNonceAccount first, the nonce's value as its blockhash).
func checkPlan(plan *pb.PrepareLadderResponse, n int) error {
	rungs := plan.GetRungs()
	if len(rungs) != n || plan.GetNonce() == "" || plan.GetComputeUnitLimit() == 0 || plan.GetDeadlineSlots() != 20 {
		return fmt.Errorf("%d rungs, nonce %q, limit %d, deadline %d", len(rungs), plan.GetNonce(), plan.GetComputeUnitLimit(), plan.GetDeadlineSlots())
	}
	for i, r := range rungs {
		if r.GetOdds() <= 0 || r.GetOdds() > 1 || r.GetSendAtSlot() < plan.GetSlot() || r.GetFeeLamports() < 5000 {
			return fmt.Errorf("rung %d: odds %g, send at slot %d (plan at %d), fee %d", i, r.GetOdds(), r.GetSendAtSlot(), plan.GetSlot(), r.GetFeeLamports())
		}
		if i > 0 && (r.GetPrice() <= rungs[i-1].GetPrice() || r.GetFeeLamports() < rungs[i-1].GetFeeLamports() || r.GetSendAtSlot() < rungs[i-1].GetSendAtSlot()) {
			return fmt.Errorf("rung %d (%d µL/CU, fee %d, slot %d) does not climb from rung %d (%d, %d, %d)", i, r.GetPrice(),
				r.GetFeeLamports(), r.GetSendAtSlot(), i-1, rungs[i-1].GetPrice(), rungs[i-1].GetFeeLamports(), rungs[i-1].GetSendAtSlot())
		}
		m, err := parseMessage(r.GetTransaction())
		if err != nil {
			return fmt.Errorf("rung %d: %w", i, err)
		}
		if base58(m.blockhash) != plan.GetNonce() {
			return fmt.Errorf("rung %d: blockhash %s, nonce %s", i, base58(m.blockhash), plan.GetNonce())
		}
		advance := m.instructions[0]
		if string(m.keys[advance.program]) != string(make([]byte, 32)) || len(advance.data) != 4 || binary.LittleEndian.Uint32(advance.data) != 4 {
			return fmt.Errorf("rung %d: instruction 0 is not AdvanceNonceAccount (program %s, data %x)", i, base58(m.keys[advance.program]), advance.data)
		}
	}
	return nil
}

// signRungs signs every rung with the payer (fee payer and nonce authority); returns them and their signatures.
func signRungs(plan *pb.PrepareLadderResponse, payer ed25519.PrivateKey) ([][]byte, []string, error) {
	var signed [][]byte
	var sigs []string
	for i, r := range plan.GetRungs() {
		wire, sig, err := signWire(r.GetTransaction(), payer.Seed())
		if err != nil {
			return nil, nil, fmt.Errorf("rung %d: %w", i, err)
		}
		signed, sigs = append(signed, wire), append(sigs, base58(sig))
	}
	return signed, sigs, nil
}

// checkRungSignatures checks that a ladder lists the rungs signed, in order, at rising prices.
func checkRungSignatures(l *pb.LadderRecord, sigs []string) error {
	if len(l.GetRungs()) != len(sigs) {
		return fmt.Errorf("%d rungs, %d sent", len(l.GetRungs()), len(sigs))
	}
	for i, r := range l.GetRungs() {
		if r.GetSignature() != sigs[i] || (i > 0 && r.GetPrice() <= l.GetRungs()[i-1].GetPrice()) {
			return fmt.Errorf("rung %d: %s at %d µL/CU, sent %s", i, r.GetSignature(), r.GetPrice(), sigs[i])
		}
	}
	return nil
}

// watchLadder follows a ladder to the end of its stream; returns the last record and how many came.
func (c *clients) watchLadder(txs pb.TransactionServiceClient, id string) (*pb.LadderRecord, int, error) {
	ctx, cancel := c.ctx(120 * time.Second)
	defer cancel()
	stream, err := txs.WatchLadder(ctx, &pb.WatchLadderRequest{Id: id})
	if err != nil {
		return nil, 0, err
	}
	var last *pb.LadderRecord
	records := 0
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, records, fmt.Errorf("after %d records: %w", records, err)
		}
		l := msg.GetLadder()
		if l == nil {
			continue // a heartbeat
		}
		records++
		if l.GetId() != id {
			return nil, records, fmt.Errorf("a record of ladder %s", l.GetId())
		}
		// pending < landed < confirmed < finalized; the final states past them never turn back into those.
		if last != nil && l.GetStatus() < last.GetStatus() && last.GetStatus() <= pb.LadderStatus_LADDER_STATUS_FINALIZED {
			return nil, records, fmt.Errorf("status went back from %s to %s", last.GetStatus(), l.GetStatus())
		}
		last = l
	}
	if last == nil {
		return nil, 0, errors.New("the stream ended without a record")
	}
	return last, records, nil
}

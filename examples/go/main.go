// Command example sends a SOL transfer through Solgate with the Go client
// (github.com/solgate/solgate/clients/go): it signs with a keypair file, estimates the fee, prepares
// the transaction (compute budget, priority fee, fresh blockhash), signs it, sends it without
// waiting, watches it to `finalized`, then lists a page of a collection. Then the same transfer as a
// fee ladder: it creates a durable nonce account, asks PrepareLadder for the transfer at rising prices
// on that nonce (so at most one can land), signs every rung, sends them with SendLadder and watches the
// climb to its end with WatchLadder. `example feed` follows a collection's change feed instead, resuming from a
// saved cursor (feed.go).
//
//	SOLGATE_URL        the gateway, e.g. http://127.0.0.1:8080
//	SOLGATE_API_KEY    an API key (`npm start` in the Solgate repository prints one)
//	SOLGATE_KEYPAIR    a solana-keygen keypair file (the localnet's demo wallet: `npm start` prints its path)
//	SOLGATE_COLLECTION a collection address (default: the localnet's seeded collection)
//	SOLGATE_TO         who receives 0.001 SOL (default: a fixed address)
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"connectrpc.com/connect"
	"github.com/mr-tron/base58"
	"google.golang.org/protobuf/proto"

	solgate "github.com/solgate/solgate/clients/go"
	solgatev1 "github.com/solgate/solgate/clients/go/solgate/v1"
)

func main() {
	// `example feed` follows a collection's change feed from a saved cursor instead (feed.go).
	do := run
	if len(os.Args) > 1 && os.Args[1] == "feed" {
		do = feed
	}
	if err := do(context.Background()); err != nil {
		fmt.Printf("failed: %s %v\n", solgate.ErrorReason(err), err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	// The clients: all seven services, the API key sent as `Authorization: Bearer` (gRPC over h2c here).
	clients, err := solgate.New(env("SOLGATE_URL", ""), env("SOLGATE_API_KEY", ""), solgate.Options{Protocol: solgate.ProtocolGRPC})
	if err != nil {
		return err
	}
	key, err := readKeypair(env("SOLGATE_KEYPAIR", ""))
	if err != nil {
		return err
	}
	payer := key.Public().(ed25519.PublicKey)
	to, err := base58.Decode(env("SOLGATE_TO", "EphAJpvNtGG6ECKwjTW814jasV2kUvH9Aj8XmQGmd1FE"))
	if err != nil || len(to) != 32 {
		return fmt.Errorf("SOLGATE_TO is not an address: %v", err)
	}
	draft := transferDraft(payer, to, 1_000_000)
	fmt.Printf("draft: 0.001 SOL from %s to %s\n", base58.Encode(payer), base58.Encode(to))

	fees, err := clients.Fee.EstimateFees(ctx, connect.NewRequest(&solgatev1.EstimateFeesRequest{Transaction: draft}))
	if err != nil {
		return err
	}
	estimate := fees.Msg.GetEstimate()
	fmt.Printf("fees: recommended %d micro-lamports/CU, base %d lamports\n", estimate.GetPriority().GetRecommended(), estimate.GetBaseFee().GetLamports())

	prepared, err := clients.Transaction.PrepareTransaction(ctx, connect.NewRequest(&solgatev1.PrepareTransactionRequest{
		Transaction: draft,
		PriorityFee: &solgatev1.PriorityFee{Choice: &solgatev1.PriorityFee_Level{Level: solgatev1.PriorityLevel_PRIORITY_LEVEL_AUTO}},
	}))
	if err != nil {
		return err
	}
	p := prepared.Msg
	fmt.Printf("prepared: %d CU at %d micro-lamports/CU, fee %d lamports\n", p.GetComputeUnitLimit(), p.GetComputeUnitPrice(), p.GetExpectedFee().GetLamports())

	signed, signature, err := sign(p.GetTransaction(), key)
	if err != nil {
		return err
	}
	started := time.Now()
	sent, err := clients.Transaction.SendTransaction(ctx, connect.NewRequest(&solgatev1.SendTransactionRequest{Transaction: signed, Confirm: proto.Bool(false)}))
	if err != nil {
		return err
	}
	fmt.Printf("sent: %s %s\n", signature, sent.Msg.GetResult().GetStatus())

	stream, err := clients.Transaction.WatchStatus(ctx, connect.NewRequest(&solgatev1.WatchStatusRequest{Signature: signature}))
	if err != nil {
		return err
	}
	last := solgatev1.TransactionStatus_TRANSACTION_STATUS_UNSPECIFIED
	for stream.Receive() {
		record := stream.Msg().GetRecord() // nil for a heartbeat
		if record == nil || record.GetStatus() == last {
			continue
		}
		last = record.GetStatus()
		fmt.Printf("status: %s at slot %d\n", last, record.GetSlot())
		if last != solgatev1.TransactionStatus_TRANSACTION_STATUS_SUBMITTED && last != solgatev1.TransactionStatus_TRANSACTION_STATUS_CONFIRMED {
			break
		}
	}
	stream.Close()
	if err := stream.Err(); err != nil {
		return err
	}
	if last != solgatev1.TransactionStatus_TRANSACTION_STATUS_FINALIZED {
		return fmt.Errorf("the transfer ended %s", last)
	}
	seconds := time.Since(started).Seconds()

	collection := env("SOLGATE_COLLECTION", "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ")
	page, err := clients.Collection.ListCollectionNfts(ctx, connect.NewRequest(&solgatev1.ListCollectionNftsRequest{Address: collection, Limit: 5}))
	if err != nil {
		return err
	}
	items := page.Msg.GetItems()
	names := make([]string, len(items))
	for i, nft := range items {
		names[i] = nft.GetName()
	}
	fmt.Printf("collection: %v; next cursor %q\n", names, page.Msg.GetNextCursor())
	fmt.Printf("done: finalized %s in %.1f s, %d collection items\n", signature, seconds, len(items))
	return ladder(ctx, clients, key, to)
}

// ladder sends the same transfer as a fee ladder on a new durable nonce account.
func ladder(ctx context.Context, clients *solgate.Clients, key ed25519.PrivateKey, to []byte) error {
	payer := key.Public().(ed25519.PublicKey)
	// A nonce account whose authority is the payer, so the payer's signature on each rung also advances it.
	noncePub, nonceKey, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	prepared, err := clients.Transaction.PrepareTransaction(ctx, connect.NewRequest(&solgatev1.PrepareTransactionRequest{
		Transaction: nonceAccountDraft(payer, noncePub),
	}))
	if err != nil {
		return err
	}
	created, err := signAll(prepared.Msg.GetTransaction(), key, nonceKey)
	if err != nil {
		return err
	}
	// Sent and confirmed: the ladder needs the nonce account on chain.
	if _, err := clients.Transaction.SendTransaction(ctx, connect.NewRequest(&solgatev1.SendTransactionRequest{Transaction: created, Confirm: proto.Bool(true)})); err != nil {
		return err
	}
	fmt.Printf("nonce account: %s\n", base58.Encode(noncePub))

	plan, err := clients.Transaction.PrepareLadder(ctx, connect.NewRequest(&solgatev1.PrepareLadderRequest{
		Transaction:   transferDraft(payer, to, 1_000_000),
		NonceAccount:  base58.Encode(noncePub),
		Rungs:         proto.Uint32(3),
		DeadlineSlots: proto.Uint32(20),
	}))
	if err != nil {
		return err
	}
	// Every rung signed now: Solgate submits the cheapest and climbs only while the market refuses it.
	rungs := make([][]byte, 0, len(plan.Msg.GetRungs()))
	for i, rung := range plan.Msg.GetRungs() {
		fmt.Printf("rung %d: %d micro-lamports/CU, odds %.2f, sent at slot %d\n", i, rung.GetPrice(), rung.GetOdds(), rung.GetSendAtSlot())
		signed, _, err := sign(rung.GetTransaction(), key)
		if err != nil {
			return err
		}
		rungs = append(rungs, signed)
	}
	sent, err := clients.Transaction.SendLadder(ctx, connect.NewRequest(&solgatev1.SendLadderRequest{Transactions: rungs}))
	if err != nil {
		return err
	}
	id := sent.Msg.GetLadder().GetId()
	fmt.Printf("ladder sent: %s\n", id)

	stream, err := clients.Transaction.WatchLadder(ctx, connect.NewRequest(&solgatev1.WatchLadderRequest{Id: id}))
	if err != nil {
		return err
	}
	record := sent.Msg.GetLadder()
	last := solgatev1.LadderStatus_LADDER_STATUS_UNSPECIFIED
	for stream.Receive() { // the stream ends once the ladder is final
		next := stream.Msg().GetLadder() // nil for a heartbeat
		if next == nil || next.GetStatus() == last {
			continue
		}
		record, last = next, next.GetStatus()
		fmt.Printf("ladder status: %s\n", last)
	}
	stream.Close()
	if err := stream.Err(); err != nil {
		return err
	}
	if last != solgatev1.LadderStatus_LADDER_STATUS_FINALIZED {
		return fmt.Errorf("the ladder ended %s", last)
	}
	fmt.Printf("ladder: finalized rung %d %s at slot %d, %d micro-lamports/CU, fee %d lamports, %d slots after the first submission\n",
		record.GetLandedRung(), record.GetSignature(), record.GetSlot(), record.GetPriceLanded(), record.GetFeePaidLamports(), record.GetSlotsToLand())
	return nil
}

// nonceAccountDraft is an unsigned legacy transaction that creates an 80-byte account owned by the
// System Program and initializes it as a durable nonce account whose authority is the payer.
func nonceAccountDraft(payer, nonce []byte) []byte {
	recentBlockhashes, _ := base58.Decode("SysvarRecentB1ockHashes11111111111111111111")
	rent, _ := base58.Decode("SysvarRent111111111111111111111111111111111")
	msg := []byte{2, 0, 3, 5} // 2 signers (payer, nonce account), 3 read-only others; 5 keys
	msg = append(msg, payer...)
	msg = append(msg, nonce...)
	msg = append(msg, make([]byte, 32)...) // the System Program
	msg = append(msg, recentBlockhashes...)
	msg = append(msg, rent...)
	msg = append(msg, make([]byte, 32)...) // recent blockhash, replaced by PrepareTransaction
	msg = append(msg, 2)                   // 2 instructions
	// CreateAccount: payer and new account; lamports (the rent-exempt minimum of 80 bytes), space, owner.
	msg = append(msg, 2, 2, 0, 1, 52)
	msg = binary.LittleEndian.AppendUint32(msg, 0)
	msg = binary.LittleEndian.AppendUint64(msg, 1_447_680)
	msg = binary.LittleEndian.AppendUint64(msg, 80)
	msg = append(msg, make([]byte, 32)...)
	// InitializeNonceAccount: the account, the RecentBlockhashes and Rent sysvars; the authority.
	msg = append(msg, 2, 3, 1, 3, 4, 36)
	msg = binary.LittleEndian.AppendUint32(msg, 6)
	msg = append(msg, payer...)
	return append(append([]byte{2}, make([]byte, 128)...), msg...) // 2 empty signature slots, then the message
}

// signAll signs a wire transaction with each key, in the signature slot of its public key among the
// message's signers (PrepareTransaction may turn a legacy draft into a v0 message; both are read).
func signAll(wire []byte, keys ...ed25519.PrivateKey) ([]byte, error) {
	if len(wire) == 0 || wire[0] >= 0x80 {
		return nil, errors.New("unexpected signature count")
	}
	count := int(wire[0])
	msg := wire[1+64*count:]
	header := msg
	if len(msg) > 0 && msg[0]&0x80 != 0 {
		header = msg[1:] // a versioned message: its prefix byte, then the same layout
	}
	if len(header) < 4 || int(header[0]) != count || header[3] >= 0x80 {
		return nil, errors.New("unexpected message header")
	}
	signed := append([]byte(nil), wire...)
	for _, key := range keys {
		public := key.Public().(ed25519.PublicKey)
		slot := -1
		for i := 0; i < count; i++ {
			if string(header[4+32*i:4+32*(i+1)]) == string(public) {
				slot = i
			}
		}
		if slot < 0 {
			return nil, fmt.Errorf("%s is not a signer of the transaction", base58.Encode(public))
		}
		copy(signed[1+64*slot:1+64*(slot+1)], ed25519.Sign(key, msg))
	}
	return signed, nil
}

// env returns the variable, or fallback; with no fallback a missing variable ends the program.
func env(name, fallback string) string {
	if value, ok := os.LookupEnv(name); ok {
		return value
	}
	if fallback == "" {
		fmt.Printf("failed: set %s\n", name)
		os.Exit(1)
	}
	return fallback
}

// readKeypair reads a solana-keygen file: a JSON array of 64 bytes, seed then public key, which is
// Go's ed25519.PrivateKey layout.
func readKeypair(path string) (ed25519.PrivateKey, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var numbers []int
	if err := json.Unmarshal(text, &numbers); err != nil || len(numbers) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%s is not a keypair file (a JSON array of 64 bytes)", path)
	}
	key := make(ed25519.PrivateKey, ed25519.PrivateKeySize)
	for i, n := range numbers {
		key[i] = byte(n)
	}
	return key, nil
}

// transferDraft is an unsigned legacy transaction with one System Program transfer. Its blockhash is
// a placeholder: PrepareTransaction puts in a fresh one.
func transferDraft(from, to []byte, lamports uint64) []byte {
	msg := []byte{1, 0, 1, 3}                      // 1 signer, 0 read-only signers, 1 read-only other (the program); 3 keys
	msg = append(msg, from...)                     // the payer, signer and writable
	msg = append(msg, to...)                       // the recipient, writable
	msg = append(msg, make([]byte, 32)...)         // the System Program (address 1111...1, all zeros)
	msg = append(msg, make([]byte, 32)...)         // recent blockhash
	msg = append(msg, 1, 2, 2, 0, 1, 12)           // 1 instruction: program key 2, accounts [0 1], 12 bytes of data
	msg = binary.LittleEndian.AppendUint32(msg, 2) // SystemInstruction::Transfer
	msg = binary.LittleEndian.AppendUint64(msg, lamports)
	return append(append([]byte{1}, make([]byte, 64)...), msg...) // 1 empty signature slot, then the message
}

// sign fills the first signature slot of a wire transaction (the payer's) and returns the signed
// bytes and the signature in base58, the transaction's id.
func sign(wire []byte, key ed25519.PrivateKey) ([]byte, string, error) {
	if len(wire) == 0 || wire[0] == 0 || wire[0] >= 0x80 || len(wire) <= 1+64*int(wire[0]) {
		return nil, "", errors.New("the prepared transaction has no room for a signature")
	}
	signature := ed25519.Sign(key, wire[1+64*int(wire[0]):])
	signed := append([]byte(nil), wire...)
	copy(signed[1:65], signature)
	return signed, base58.Encode(signature), nil
}

// Command example sends a SOL transfer through Solgate with the Go client
// (github.com/solgate/solgate/clients/go): it signs with a keypair file, estimates the fee, prepares
// the transaction (compute budget, priority fee, fresh blockhash), signs it, sends it without
// waiting, watches it to `finalized`, then lists a page of a collection.
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
	if err := run(context.Background()); err != nil {
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
	return nil
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

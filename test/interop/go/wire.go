package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
)

var (
	recentBlockhashesSysvar = mustBase58("SysvarRecentB1ockHashes11111111111111111111")
	rentSysvar              = mustBase58("SysvarRent111111111111111111111111111111111")
	computeBudgetProgram    = mustBase58("ComputeBudget111111111111111111111111111111")
)

// transferDraft is an unsigned legacy transaction with one System Program transfer; its blockhash is a
// placeholder the gateway replaces.
func transferDraft(from, to []byte, lamports uint64) []byte {
	msg := []byte{1, 0, 1, 3} // 1 signer; the System Program read-only; 3 keys
	msg = append(msg, from...)
	msg = append(msg, to...)
	msg = append(msg, make([]byte, 32)...) // the System Program
	msg = append(msg, make([]byte, 32)...) // blockhash
	msg = append(msg, 1, 2, 2, 0, 1, 12)   // program 2, accounts [0 1], 12 bytes of data
	msg = binary.LittleEndian.AppendUint32(msg, 2)
	msg = binary.LittleEndian.AppendUint64(msg, lamports)
	return append(append([]byte{1}, make([]byte, 64)...), msg...)
}

// nonceAccountDraft is an unsigned legacy transaction that creates an 80-byte System-owned account (rent-exempt)
// and initializes it as a durable nonce whose authority is the payer.
func nonceAccountDraft(payer, nonce []byte) []byte {
	msg := []byte{2, 0, 3, 5} // 2 signers (payer, new account); 3 read-only others; 5 keys
	for _, key := range [][]byte{payer, nonce, make([]byte, 32), recentBlockhashesSysvar, rentSysvar} {
		msg = append(msg, key...)
	}
	msg = append(msg, make([]byte, 32)...) // blockhash
	msg = append(msg, 2)
	msg = append(msg, 2, 2, 0, 1, 52) // CreateAccount: lamports, space 80, owner the System Program
	msg = binary.LittleEndian.AppendUint32(msg, 0)
	msg = binary.LittleEndian.AppendUint64(msg, 1_447_680)
	msg = binary.LittleEndian.AppendUint64(msg, 80)
	msg = append(msg, make([]byte, 32)...)
	msg = append(msg, 2, 3, 1, 3, 4, 36) // InitializeNonceAccount(authority): nonce, RecentBlockhashes, Rent
	msg = binary.LittleEndian.AppendUint32(msg, 6)
	msg = append(msg, payer...)
	return append(append([]byte{2}, make([]byte, 128)...), msg...)
}

// advanceNonceTx is the nonce authority's own AdvanceNonceAccount, as a durable-nonce transaction on the nonce's
// current value, at `price` micro-lamports per CU. It returns the signed wire bytes and the signature.
func advanceNonceTx(authority ed25519.PrivateKey, nonceAccount, value string, price uint64) ([]byte, string, error) {
	account, err := decodeBase58(nonceAccount)
	if err != nil {
		return nil, "", err
	}
	blockhash, err := decodeBase58(value)
	if err != nil || len(blockhash) != 32 {
		return nil, "", fmt.Errorf("nonce value %q", value)
	}
	msg := []byte{1, 0, 3, 5} // the authority signs and pays; sysvar and both programs read-only
	for _, key := range [][]byte{authority.Public().(ed25519.PublicKey), account, recentBlockhashesSysvar, make([]byte, 32), computeBudgetProgram} {
		msg = append(msg, key...)
	}
	msg = append(msg, blockhash...)
	msg = append(msg, 2)
	msg = append(msg, 3, 3, 1, 2, 0, 4) // AdvanceNonceAccount: nonce, RecentBlockhashes, authority
	msg = binary.LittleEndian.AppendUint32(msg, 4)
	msg = append(msg, 4, 0, 9, 3) // SetComputeUnitPrice
	msg = binary.LittleEndian.AppendUint64(msg, price)
	sig := ed25519.Sign(authority, msg)
	return append(append([]byte{1}, sig...), msg...), base58(sig), nil
}

// signAll signs a wire transaction (legacy or v0) with each key, in its signer's slot.
func signAll(wire []byte, keys ...ed25519.PrivateKey) ([]byte, error) {
	if len(wire) == 0 || wire[0] >= 0x80 {
		return nil, errors.New("unexpected signature count")
	}
	count := int(wire[0])
	msg := wire[1+64*count:]
	m, err := parseMessage(wire)
	if err != nil {
		return nil, err
	}
	signed := append([]byte(nil), wire...)
	for _, key := range keys {
		public := key.Public().(ed25519.PublicKey)
		slot := -1
		for i := 0; i < count && i < len(m.keys); i++ {
			if string(m.keys[i]) == string(public) {
				slot = i
			}
		}
		if slot < 0 {
			return nil, fmt.Errorf("%s is not a signer", base58(public))
		}
		copy(signed[1+64*slot:1+64*(slot+1)], ed25519.Sign(key, msg))
	}
	return signed, nil
}

// message is what the checks read of a transaction's message.
type message struct {
	keys         [][]byte
	blockhash    []byte
	instructions []instruction
}

type instruction struct {
	program  int
	accounts []byte
	data     []byte
}

// parseMessage reads a wire transaction's static keys, blockhash and instructions (legacy or v0; lengths below
// 128, so every compact-u16 is one byte).
func parseMessage(wire []byte) (*message, error) {
	short := errors.New("transaction too short")
	if len(wire) == 0 || wire[0] >= 0x80 {
		return nil, errors.New("unexpected signature count")
	}
	b := wire[1+64*int(wire[0]):]
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = b[1:] // v0: the version prefix, then the same layout
	}
	if len(b) < 4 {
		return nil, short
	}
	n := int(b[3])
	b = b[4:]
	if n >= 0x80 || len(b) < 32*n+33 {
		return nil, short
	}
	m := &message{}
	for i := 0; i < n; i++ {
		m.keys = append(m.keys, b[32*i:32*(i+1)])
	}
	b = b[32*n:]
	m.blockhash, b = b[:32], b[32:]
	count := int(b[0])
	b = b[1:]
	for i := 0; i < count; i++ {
		if len(b) < 2 || int(b[0]) >= n {
			return nil, short
		}
		ix := instruction{program: int(b[0])}
		na := int(b[1])
		if len(b) < 3+na {
			return nil, short
		}
		ix.accounts = b[2 : 2+na]
		nd := int(b[2+na])
		if nd >= 0x80 || len(b) < 3+na+nd {
			return nil, short
		}
		ix.data = b[3+na : 3+na+nd]
		b = b[3+na+nd:]
		m.instructions = append(m.instructions, ix)
	}
	if count == 0 {
		return nil, errors.New("no instructions")
	}
	return m, nil
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func mustBase58(s string) []byte {
	b, err := decodeBase58(s)
	if err != nil {
		panic(err)
	}
	return b
}

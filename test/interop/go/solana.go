package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58 encodes b the way Solana writes addresses and signatures.
func base58(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// signWire signs a wire transaction whose first required signer is the payer: it reads the
// signature count (compact-u16), signs the message after the signature slots, and fills slot 0.
// It returns the signed bytes and the signature (the transaction's id).
func signWire(wire, seed []byte) ([]byte, []byte, error) {
	if len(wire) == 0 || wire[0]&0x80 != 0 {
		return nil, nil, errors.New("transaction has no signature slots or more than 127")
	}
	count := int(wire[0])
	msgStart := 1 + 64*count
	if count == 0 || len(wire) <= msgStart {
		return nil, nil, errors.New("transaction too short")
	}
	sig := ed25519.Sign(ed25519.NewKeyFromSeed(seed), wire[msgStart:])
	signed := append([]byte(nil), wire...)
	copy(signed[1:65], sig)
	return signed, sig, nil
}

// sha256Hex is a Jito bundle id of one transaction: SHA-256 of its first signature (base58), hex.
func sha256Hex(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// decodeBase58 decodes an address or signature.
func decodeBase58(s string) ([]byte, error) {
	n := new(big.Int)
	radix := big.NewInt(58)
	for _, ch := range []byte(s) {
		i := strings.IndexByte(base58Alphabet, ch)
		if i < 0 {
			return nil, fmt.Errorf("%q is not base58", s)
		}
		n.Mul(n, radix).Add(n, big.NewInt(int64(i)))
	}
	body := n.Bytes()
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	return append(make([]byte, zeros), body...), nil
}

package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// fixture is what the driver tells every client, through the environment, in plain strings so that
// each language parses it without a JSON library:
//
//	SOLGATE_ADDR            host:port of the server (gRPC over h2c)
//	SOLGATE_API_KEY         a valid API key
//	INTEROP_LOCALNET_URL    the embedded localnet's JSON-RPC URL (its control methods; on-chain look-ups)
//	INTEROP_LANDED          comma-separated services that are implemented (others must answer Unimplemented)
//	INTEROP_PROGRAM_ID      a program whose accounts to list
//	INTEROP_PROGRAM_SIZE    the data size filter of that query
//	INTEROP_PROGRAM_MATCH   the `offset:base58` filter of that query
//	INTEROP_PROGRAM_EXPECT  the accounts the query must return, sorted by address:
//	                        `address,lamports,space,mint,owner,rawAmount,decimals,state` joined by `;`
//	INTEROP_DRAFT_TX        an unsigned draft transaction (hex) paid by the payer below
//	INTEROP_BUNDLE_TX       an unsigned draft (hex) paid by the payer that tips a Jito tip account
//	INTEROP_PAYER_SEED      the payer's ed25519 seed (hex, 32 bytes)
//	INTEROP_COLLECTION      a verified collection's mint address
//	INTEROP_COLLECTION_EXPECT `itemCount;name;memberId,memberId,...` (member ids sorted)
//	INTEROP_NFT_OWNER       a wallet that holds NFTs
//	INTEROP_NFT_OWNER_EXPECT the ids of its NFTs, sorted by id, joined by `,`
type fixture struct {
	addr, apiKey string
	localnetURL  string
	landed       []string

	programID     string
	programSize   uint64
	programMatch  string
	programExpect []expectedAccount

	draftTx   []byte
	bundleTx  []byte
	payerSeed []byte

	collection        string
	collectionCount   uint64
	collectionName    string
	collectionMembers []string

	nftOwner    string
	nftOwnerIds []string
}

// expectedAccount is one token account the program query must return.
type expectedAccount struct {
	address     string
	lamports    uint64
	space       uint64
	mint, owner string
	raw         uint64
	decimals    uint32
	state       string
}

func loadFixture() (*fixture, error) {
	var missing []string
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	fx := &fixture{
		addr:         get("SOLGATE_ADDR"),
		apiKey:       get("SOLGATE_API_KEY"),
		localnetURL:  get("INTEROP_LOCALNET_URL"),
		programID:    get("INTEROP_PROGRAM_ID"),
		programMatch: get("INTEROP_PROGRAM_MATCH"),
		collection:   get("INTEROP_COLLECTION"),
		nftOwner:     get("INTEROP_NFT_OWNER"),
	}
	fx.nftOwnerIds = strings.Split(get("INTEROP_NFT_OWNER_EXPECT"), ",")
	if landed := os.Getenv("INTEROP_LANDED"); landed != "" {
		fx.landed = strings.Split(landed, ",")
	}
	var err error
	if fx.programSize, err = strconv.ParseUint(get("INTEROP_PROGRAM_SIZE"), 10, 64); err != nil {
		return nil, fmt.Errorf("INTEROP_PROGRAM_SIZE: %w", err)
	}
	for _, item := range strings.Split(get("INTEROP_PROGRAM_EXPECT"), ";") {
		f := strings.Split(item, ",")
		if len(f) != 8 {
			return nil, fmt.Errorf("INTEROP_PROGRAM_EXPECT: %q has %d fields, want 8", item, len(f))
		}
		a := expectedAccount{address: f[0], mint: f[3], owner: f[4], state: f[7]}
		var dec uint64
		for _, p := range []struct {
			s   string
			dst *uint64
		}{{f[1], &a.lamports}, {f[2], &a.space}, {f[5], &a.raw}, {f[6], &dec}} {
			if *p.dst, err = strconv.ParseUint(p.s, 10, 64); err != nil {
				return nil, fmt.Errorf("INTEROP_PROGRAM_EXPECT: %w", err)
			}
		}
		a.decimals = uint32(dec)
		fx.programExpect = append(fx.programExpect, a)
	}
	if fx.draftTx, err = hex.DecodeString(get("INTEROP_DRAFT_TX")); err != nil {
		return nil, fmt.Errorf("INTEROP_DRAFT_TX: %w", err)
	}
	if fx.bundleTx, err = hex.DecodeString(get("INTEROP_BUNDLE_TX")); err != nil {
		return nil, fmt.Errorf("INTEROP_BUNDLE_TX: %w", err)
	}
	if fx.payerSeed, err = hex.DecodeString(get("INTEROP_PAYER_SEED")); err != nil || len(fx.payerSeed) != 32 {
		return nil, fmt.Errorf("INTEROP_PAYER_SEED: want 32 bytes of hex")
	}
	coll := strings.SplitN(get("INTEROP_COLLECTION_EXPECT"), ";", 3)
	if len(coll) == 3 {
		if fx.collectionCount, err = strconv.ParseUint(coll[0], 10, 64); err != nil {
			return nil, fmt.Errorf("INTEROP_COLLECTION_EXPECT: %w", err)
		}
		fx.collectionName = coll[1]
		fx.collectionMembers = strings.Split(coll[2], ",")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing environment: %s", strings.Join(missing, ", "))
	}
	return fx, nil
}

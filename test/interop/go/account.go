package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// accountChecks covers AccountService.GetAccount, WalletService.ListWalletTokens and ListWalletNfts,
// and TokenService.ListTokenHolders, against the token accounts and NFTs the fixture lists.
func (c *clients) accountChecks(s *suite) {
	accounts := pb.NewAccountServiceClient(c.conn)
	wallets := pb.NewWalletServiceClient(c.conn)
	tokens := pb.NewTokenServiceClient(c.conn)
	fx := c.fx
	mint := strings.TrimPrefix(fx.programMatch, "0:")
	first := fx.programExpect[0]

	s.check("account: GetAccount decodes a token account as ListProgramAccounts does", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := accounts.GetAccount(ctx, &pb.GetAccountRequest{Address: first.address})
		if err != nil {
			return err
		}
		a := res.GetAccount()
		if a.GetOwner() != fx.programID || a.GetExecutable() {
			return fmt.Errorf("owner %s executable %v, want %s false", a.GetOwner(), a.GetExecutable(), fx.programID)
		}
		return compareAccounts([]*pb.ProgramAccount{{Address: a.GetAddress(), Lamports: a.GetLamports(), Sol: a.GetSol(), Space: a.GetSpace(), Data: a.GetData()}}, []expectedAccount{first})
	})
	s.check("account: GetAccount of a mint gives the node's parsed fields", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := accounts.GetAccount(ctx, &pb.GetAccountRequest{Address: mint})
		if err != nil {
			return err
		}
		parsed := res.GetAccount().GetData().GetParsed()
		decimals := parsed.GetFields().GetFields()["decimals"].GetNumberValue()
		if parsed.GetType() != "mint" || uint32(decimals) != first.decimals {
			return fmt.Errorf("parsed %q with decimals %v, want mint with %d", parsed.GetType(), decimals, first.decimals)
		}
		return nil
	})
	s.check("account: GetAccount of a malformed address is InvalidArgument INVALID_ADDRESS", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := accounts.GetAccount(ctx, &pb.GetAccountRequest{Address: "not-an-address"})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_ADDRESS")
		return err
	})

	s.check("wallet: ListWalletTokens lists the holder's balance of the mint", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := wallets.ListWalletTokens(ctx, &pb.ListWalletTokensRequest{Owner: first.owner, IncludeZero: true})
		if err != nil {
			return err
		}
		for _, t := range res.GetItems() {
			if t.GetTokenAccount() == first.address {
				if t.GetMint() != mint || t.GetAmount().GetRaw() != first.raw {
					return fmt.Errorf("%s holds %d of %s, want %d of %s", t.GetTokenAccount(), t.GetAmount().GetRaw(), t.GetMint(), first.raw, mint)
				}
				return nil
			}
		}
		return fmt.Errorf("%s not among the %d balances of %s", first.address, len(res.GetItems()), first.owner)
	})
	s.check("wallet: ListWalletNfts pages of 2 list the owner's NFTs by id", func() error {
		var got []string
		cursor := ""
		for page := 0; page < 100; page++ {
			ctx, cancel := c.ctx(10 * time.Second)
			res, err := wallets.ListWalletNfts(ctx, &pb.ListWalletNftsRequest{Owner: fx.nftOwner, Limit: 2, Cursor: cursor})
			cancel()
			if err != nil {
				return fmt.Errorf("page %d: %w", page, err)
			}
			for _, n := range res.GetItems() {
				got = append(got, n.GetId())
			}
			if res.NextCursor == nil {
				break
			}
			cursor = res.GetNextCursor()
		}
		if strings.Join(got, ",") != strings.Join(fx.nftOwnerIds, ",") {
			return fmt.Errorf("NFTs %v, want %v", got, fx.nftOwnerIds)
		}
		return nil
	})

	s.check("token: ListTokenHolders pages of 7 list every holder with a balance, by token account", func() error {
		var got []string
		cursor := ""
		for page := 0; page < 100; page++ {
			ctx, cancel := c.ctx(10 * time.Second)
			res, err := tokens.ListTokenHolders(ctx, &pb.ListTokenHoldersRequest{Mint: mint, Limit: 7, Cursor: cursor})
			cancel()
			if err != nil {
				return fmt.Errorf("page %d: %w", page, err)
			}
			for _, h := range res.GetItems() {
				got = append(got, fmt.Sprintf("%s:%s:%d", h.GetTokenAccount(), h.GetOwner(), h.GetAmount().GetRaw()))
			}
			if res.NextCursor == nil {
				break
			}
			cursor = res.GetNextCursor()
		}
		var want []string
		for _, a := range fx.programExpect {
			if a.raw > 0 {
				want = append(want, fmt.Sprintf("%s:%s:%d", a.address, a.owner, a.raw))
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ";") != strings.Join(want, ";") {
			return fmt.Errorf("holders %v, want %v", got, want)
		}
		return nil
	})
}

package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// authChecks: calls without a key, or with a wrong one, are refused with UNAUTHENTICATED.
func (c *clients) authChecks(s *suite) {
	programs := pb.NewProgramServiceClient(c.conn)
	req := &pb.ListProgramAccountsRequest{ProgramId: c.fx.programID, Limit: 1}
	s.check("auth: no key is Unauthenticated with ErrorInfo UNAUTHENTICATED", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := programs.ListProgramAccounts(ctx, req)
		_, err = expectError(err, codes.Unauthenticated, "UNAUTHENTICATED")
		return err
	})
	s.check("auth: a wrong key is Unauthenticated", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer not-the-key")
		_, err := programs.ListProgramAccounts(ctx, req)
		_, err = expectError(err, codes.Unauthenticated, "UNAUTHENTICATED")
		return err
	})
}

// programChecks covers ProgramService.ListProgramAccounts.
func (c *clients) programChecks(s *suite) {
	programs := pb.NewProgramServiceClient(c.conn)
	fx := c.fx
	query := func(limit uint32, cursor string) *pb.ListProgramAccountsRequest {
		size := fx.programSize
		return &pb.ListProgramAccountsRequest{
			ProgramId: fx.programID, Size: &size, Match: []string{fx.programMatch}, Limit: limit, Cursor: cursor,
		}
	}
	if c.pending("ProgramService") {
		s.check("program: ListProgramAccounts is Unimplemented (TODO: ProgramService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := programs.ListProgramAccounts(ctx, query(0, ""))
			return expectUnimplemented(err)
		})
		return
	}
	s.check("program: ListProgramAccounts pages of 1 follow next_cursor to the end", func() error {
		var got []*pb.ProgramAccount
		cursor := ""
		for page := 0; ; page++ {
			if page > len(fx.programExpect)+1 {
				return fmt.Errorf("more than %d pages", page)
			}
			ctx, cancel := c.ctx(10 * time.Second)
			res, err := programs.ListProgramAccounts(ctx, query(1, cursor))
			cancel()
			if err != nil {
				return fmt.Errorf("page %d: %w", page, err)
			}
			if res.GetProgramId() != fx.programID {
				return fmt.Errorf("program_id %q, want %q", res.GetProgramId(), fx.programID)
			}
			if len(res.GetItems()) > 1 {
				return fmt.Errorf("page %d has %d items, limit was 1", page, len(res.GetItems()))
			}
			got = append(got, res.GetItems()...)
			if res.NextCursor == nil {
				break
			}
			cursor = res.GetNextCursor()
		}
		return compareAccounts(got, fx.programExpect)
	})
	s.check("program: one page of 500 holds every account, next_cursor absent", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		res, err := programs.ListProgramAccounts(ctx, query(500, ""))
		if err != nil {
			return err
		}
		if res.NextCursor != nil {
			return fmt.Errorf("next_cursor %q on the only page", res.GetNextCursor())
		}
		return compareAccounts(res.GetItems(), fx.programExpect)
	})
	s.check("program: a malformed program id is InvalidArgument INVALID_ADDRESS", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := programs.ListProgramAccounts(ctx, &pb.ListProgramAccountsRequest{ProgramId: "not-an-address"})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_ADDRESS")
		return err
	})
	s.check("program: limit 501 is InvalidArgument INVALID_PARAMETER naming the field", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := programs.ListProgramAccounts(ctx, query(501, ""))
		info, err := expectError(err, codes.InvalidArgument, "INVALID_PARAMETER")
		if err != nil {
			return err
		}
		if info.GetMetadata()["field"] != "limit" {
			return fmt.Errorf("ErrorInfo.metadata %v, want field=limit", info.GetMetadata())
		}
		return nil
	})
	s.check("program: an unknown chain is NotFound UNKNOWN_CHAIN", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		req := query(1, "")
		req.Chain = "no-such-chain"
		_, err := programs.ListProgramAccounts(ctx, req)
		_, err = expectError(err, codes.NotFound, "UNKNOWN_CHAIN")
		return err
	})
}

// compareAccounts checks every field of the listed accounts against the expectation, in order.
func compareAccounts(got []*pb.ProgramAccount, want []expectedAccount) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d accounts, want %d", len(got), len(want))
	}
	for i, a := range got {
		w := want[i]
		info := a.GetData().GetParsed().GetInfo()
		amount := info.GetTokenAmount()
		switch {
		case a.GetAddress() != w.address:
			return fmt.Errorf("item %d address %s, want %s (sorted by address)", i, a.GetAddress(), w.address)
		case a.GetLamports() != w.lamports:
			return fmt.Errorf("%s lamports %d, want %d", w.address, a.GetLamports(), w.lamports)
		case math.Abs(a.GetSol()-float64(w.lamports)/1e9) > 1e-9:
			return fmt.Errorf("%s sol %v, want %v", w.address, a.GetSol(), float64(w.lamports)/1e9)
		case a.GetSpace() != w.space:
			return fmt.Errorf("%s space %d, want %d", w.address, a.GetSpace(), w.space)
		case a.GetData().GetFormat() != pb.DataFormat_DATA_FORMAT_PARSED:
			return fmt.Errorf("%s data format %s, want DATA_FORMAT_PARSED", w.address, a.GetData().GetFormat())
		case a.GetData().GetProgram() != "spl-token" || a.GetData().GetParsed().GetType() != "account":
			return fmt.Errorf("%s parsed as %q/%q", w.address, a.GetData().GetProgram(), a.GetData().GetParsed().GetType())
		case info.GetMint() != w.mint || info.GetOwner() != w.owner || info.GetState() != w.state:
			return fmt.Errorf("%s info %s/%s/%s, want %s/%s/%s", w.address, info.GetMint(), info.GetOwner(), info.GetState(), w.mint, w.owner, w.state)
		case amount.GetRaw() != w.raw:
			return fmt.Errorf("%s raw amount %d, want %d (64-bit)", w.address, amount.GetRaw(), w.raw)
		case amount.GetDecimals() != w.decimals:
			return fmt.Errorf("%s decimals %d, want %d", w.address, amount.GetDecimals(), w.decimals)
		case amount.GetUiString() != uiString(w.raw, w.decimals):
			return fmt.Errorf("%s ui_string %q, want %q", w.address, amount.GetUiString(), uiString(w.raw, w.decimals))
		}
	}
	return nil
}

// uiString renders raw / 10^decimals exactly, without trailing zeros (as Solana's uiAmountString).
func uiString(raw uint64, decimals uint32) string {
	s := fmt.Sprintf("%0*d", int(decimals)+1, raw)
	if decimals == 0 {
		return s
	}
	whole, frac := s[:len(s)-int(decimals)], s[len(s)-int(decimals):]
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

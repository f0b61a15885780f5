package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/solgate/solgate/clients/go/solgate/v1"
)

// collectionChecks covers CollectionService.GetCollection and ListCollectionNfts.
func (c *clients) collectionChecks(s *suite) {
	cols := pb.NewCollectionServiceClient(c.conn)
	fx := c.fx
	if c.pending("CollectionService") {
		s.check("collection: GetCollection is Unimplemented (TODO: CollectionService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := cols.GetCollection(ctx, &pb.GetCollectionRequest{Address: fx.collection})
			return expectUnimplemented(err)
		})
		s.check("collection: ListCollectionNfts is Unimplemented (TODO: CollectionService not landed)", func() error {
			ctx, cancel := c.ctx(10 * time.Second)
			defer cancel()
			_, err := cols.ListCollectionNfts(ctx, &pb.ListCollectionNftsRequest{Address: fx.collection})
			return expectUnimplemented(err)
		})
		return
	}
	s.check("collection: GetCollection gives name, 64-bit item count and a well-formed floor price", func() error {
		ctx, cancel := c.ctx(30 * time.Second)
		defer cancel()
		res, err := cols.GetCollection(ctx, &pb.GetCollectionRequest{Address: fx.collection})
		if err != nil {
			return err
		}
		col := res.GetCollection()
		if col.GetAddress() != fx.collection || col.GetName() != fx.collectionName || col.GetItemCount() != fx.collectionCount {
			return fmt.Errorf("collection %s %q with %d items, want %s %q with %d",
				col.GetAddress(), col.GetName(), col.GetItemCount(), fx.collection, fx.collectionName, fx.collectionCount)
		}
		if fp := col.GetFloorPrice(); fp != nil {
			if err := recent("floor_price.updated_at", fp.GetUpdatedAt()); err != nil {
				return err
			}
			if math.Abs(fp.GetSol()-float64(fp.GetLamports())/1e9) > 1e-9 || fp.GetSource() == "" {
				return fmt.Errorf("floor price %v", fp)
			}
		}
		return nil
	})
	s.check("collection: ListCollectionNfts pages of 1 list the verified members by id", func() error {
		var ids []string
		cursor := ""
		for page := 0; ; page++ {
			if page > len(fx.collectionMembers)+1 {
				return fmt.Errorf("more than %d pages", page)
			}
			ctx, cancel := c.ctx(30 * time.Second)
			res, err := cols.ListCollectionNfts(ctx, &pb.ListCollectionNftsRequest{Address: fx.collection, Limit: 1, Cursor: cursor})
			cancel()
			if err != nil {
				return fmt.Errorf("page %d: %w", page, err)
			}
			for _, nft := range res.GetItems() {
				if nft.GetStandard() == pb.TokenStandard_TOKEN_STANDARD_UNSPECIFIED || nft.GetName() == "" {
					return fmt.Errorf("member %s: standard %s, name %q", nft.GetId(), nft.GetStandard(), nft.GetName())
				}
				ids = append(ids, nft.GetId())
			}
			if res.NextCursor == nil {
				break
			}
			cursor = res.GetNextCursor()
		}
		if !slices.Equal(ids, fx.collectionMembers) {
			return fmt.Errorf("members %v, want %v", ids, fx.collectionMembers)
		}
		return nil
	})
	s.check("collection: a malformed address is InvalidArgument INVALID_ADDRESS", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := cols.GetCollection(ctx, &pb.GetCollectionRequest{Address: "not-an-address"})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_ADDRESS")
		return err
	})
	s.check("collection: limit 1001 is InvalidArgument INVALID_PARAMETER", func() error {
		ctx, cancel := c.ctx(10 * time.Second)
		defer cancel()
		_, err := cols.ListCollectionNfts(ctx, &pb.ListCollectionNftsRequest{Address: fx.collection, Limit: 1001})
		_, err = expectError(err, codes.InvalidArgument, "INVALID_PARAMETER")
		return err
	})
}

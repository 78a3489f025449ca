package storekit

import (
	"context"
	"time"

	"github.com/posgate/posgate"
)

// CarouselCandidates is how many promotion ids ListCarouselPromotions
// reads in order at a time: a few times the carousel's bound, so that one
// round usually suffices although recurrences (checked in Go) drop some.
const CarouselCandidates = 4 * posgate.MaxCarouselPromotions

// FirstApplying is the loop of both stores' ListCarouselPromotions. ids
// returns, in the carousel's order, the ids of at most n candidates after
// the first offset (those whose validity bounds contain at: the query's
// filter); fetch returns the promotions of some ids, keyed by id. It reads
// candidates a page at a time and keeps, in order, those that apply at at
// (Promotion.ValidAt: the recurrences), until it has limit of them or no
// candidate is left, so that a company's 100,000 promotions are not all
// read for the 50 a carousel shows.
func FirstApplying(ctx context.Context, at time.Time, limit int,
	ids func(ctx context.Context, offset, n int) ([]string, error),
	fetch func(ctx context.Context, ids []string) (map[string]*posgate.Promotion, error),
) ([]*posgate.Promotion, error) {
	out := []*posgate.Promotion{}
	for offset := 0; len(out) < limit; offset += CarouselCandidates {
		page, err := ids(ctx, offset, CarouselCandidates)
		if err != nil {
			return nil, err
		}
		for start := 0; start < len(page) && len(out) < limit; start += limit {
			batch := page[start:min(start+limit, len(page))]
			found, err := fetch(ctx, batch)
			if err != nil {
				return nil, err
			}
			for _, id := range batch {
				if p := found[id]; p != nil && p.ValidAt(at) && len(out) < limit {
					out = append(out, p)
				}
			}
		}
		if len(page) < CarouselCandidates {
			break
		}
	}
	return out, nil
}

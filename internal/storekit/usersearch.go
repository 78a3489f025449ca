package storekit

import (
	"context"
	"slices"

	"github.com/posgate/posgate"
)

// TermQuery is one lookup of a loyalty-user keyword search in a store's
// table of search terms (posgate.SearchTerms), each row of which holds the
// term and the user's rank (posgate.UserRank).
type TermQuery struct {
	// Kind says what to look up:
	//   - TermExact: the users holding term Lo, in rank order;
	//   - TermRange: the rows whose term is in [Lo, Hi), in any order,
	//     a user once per term it holds there;
	//   - TermBucket: the distinct users holding a term in [Lo, Hi), in
	//     rank order, read through Bucket (posgate.TermBucket).
	Kind           TermKind
	Lo, Hi, Bucket string
	// Limit is how many rows to return at most.
	Limit int
}

// TermKind is the kind of a TermQuery.
type TermKind int

// The kinds of TermQuery.
const (
	TermExact TermKind = iota
	TermRange
	TermBucket
)

// RunTermQueries runs queries (in one round trip where the store can) and
// returns each one's answer.
type RunTermQueries func(ctx context.Context, queries []TermQuery) ([][]posgate.UserRank, error)

// RangeScanLimit is how many rows of a prefix's range a search reads at
// most before it reads the prefix's bucket in rank order instead: below it,
// every match is at hand and ranked in Go; above it, the bucket yields the
// first matches in order after reading about MaxUserMatches times the
// bucket's share of matches, which is small when a prefix has that many.
const RangeScanLimit = 200

// SearchUserIDs answers a keyword search with run: the ids of at most
// MaxUserMatches users, the exact matches first (the users holding one of
// k's exact terms) and then the rest, each group in rank order. Exact terms
// are looked up in rank order; each prefix of k is looked up as a range of
// at most RangeScanLimit rows, or straight through its bucket when it is a
// whole bucket (a keyword of TermBucketRunes characters), and through its
// bucket when its range holds more.
func SearchUserIDs(ctx context.Context, k posgate.UserKeyword, run RunTermQueries) ([]string, error) {
	var qs []TermQuery
	for _, t := range k.ExactTerms() {
		qs = append(qs, TermQuery{Kind: TermExact, Lo: t, Limit: posgate.MaxUserMatches})
	}
	exactQueries := len(qs)
	for _, p := range k.Prefixes() {
		if b := posgate.TermBucket(p); b == p {
			qs = append(qs, TermQuery{Kind: TermBucket, Lo: p, Hi: PrefixEnd(p), Bucket: b, Limit: posgate.MaxUserMatches})
		} else {
			qs = append(qs, TermQuery{Kind: TermRange, Lo: p, Hi: PrefixEnd(p), Limit: RangeScanLimit + 1})
		}
	}
	answers, err := run(ctx, qs)
	if err != nil {
		return nil, err
	}
	exact := topRanks(slices.Concat(answers[:exactQueries]...), nil, posgate.MaxUserMatches)
	if len(exact) == posgate.MaxUserMatches {
		return rankIDs(exact), nil
	}
	var more []TermQuery
	var others []posgate.UserRank
	for i, q := range qs[exactQueries:] {
		a := answers[exactQueries+i]
		if q.Kind == TermRange && len(a) > RangeScanLimit {
			more = append(more, TermQuery{Kind: TermBucket, Lo: q.Lo, Hi: q.Hi, Bucket: posgate.TermBucket(q.Lo), Limit: posgate.MaxUserMatches})
			continue
		}
		others = append(others, a...)
	}
	if len(more) > 0 {
		answers, err := run(ctx, more)
		if err != nil {
			return nil, err
		}
		others = append(others, slices.Concat(answers...)...)
	}
	skip := make(map[string]bool, len(exact))
	for _, r := range exact {
		skip[r.ID] = true
	}
	return rankIDs(append(exact, topRanks(others, skip, posgate.MaxUserMatches-len(exact))...)), nil
}

// topRanks sorts ranks, drops duplicates and the ids of skip, and keeps
// the first n.
func topRanks(ranks []posgate.UserRank, skip map[string]bool, n int) []posgate.UserRank {
	slices.SortFunc(ranks, posgate.CompareUserRank)
	out := make([]posgate.UserRank, 0, min(n, len(ranks)))
	for i, r := range ranks {
		if len(out) == n {
			break
		}
		if skip[r.ID] || (i > 0 && ranks[i-1] == r) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func rankIDs(ranks []posgate.UserRank) []string {
	ids := make([]string, len(ranks))
	for i, r := range ranks {
		ids[i] = r.ID
	}
	return ids
}

// InOrder returns users in the order of ids, without those that ids does
// not name (a user deleted between a search's lookups).
func InOrder(ids []string, users []*posgate.LoyaltyUser) []*posgate.LoyaltyUser {
	byID := make(map[string]*posgate.LoyaltyUser, len(users))
	for _, u := range users {
		byID[u.ID] = u
	}
	out := make([]*posgate.LoyaltyUser, 0, len(ids))
	for _, id := range ids {
		if u := byID[id]; u != nil {
			out = append(out, u)
		}
	}
	return out
}

// UserSearchStatements are a store's statements of a keyword search, for
// a benchmark's floor (the same statements run bare, through the same
// driver): Exact, Range and Bucket are the lookups of TermExact, TermRange
// and TermBucket queries (parameters: POS system, company, then Lo, Limit;
// Lo, Hi, Limit; Bucket, Lo, Hi, Limit), UsersByID reads the answer's users
// (POS system, company, the ids: a JSON array on SQLite, an array on
// PostgreSQL). SearchUserIDs with a runner of the first three, then
// UsersByID, is a search.
type UserSearchStatements struct {
	Exact, Range, Bucket, UsersByID string
}

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
	//   - TermRange: the runner sets Scanned to the number of rows of the
	//     terms in [Lo, Hi), counting up to Scan; when there are some but
	//     fewer, the answer is their distinct users in rank order (else it
	//     is not read);
	//   - TermBucket: the distinct users holding a term in [Lo, Hi), in
	//     rank order, read through Bucket (posgate.TermBucket).
	//   - TermPrefix: TermRange and TermBucket in one: every row of the
	//     terms in [Lo, Hi) when there are fewer than Scan (a user once per
	//     term, in any order), else TermBucket's answer.
	Kind           TermKind
	Lo, Hi, Bucket string
	// Limit is how many rows (users) to return at most.
	Limit int
	// Scan and Scanned: see TermRange.
	Scan, Scanned int
}

// TermKind is the kind of a TermQuery.
type TermKind int

// The kinds of TermQuery.
const (
	TermExact TermKind = iota
	TermRange
	TermBucket
	TermPrefix
)

// RunTermQueries runs queries (in one round trip where the store can) and
// returns each one's answer.
type RunTermQueries func(ctx context.Context, queries []TermQuery) ([][]posgate.UserRank, error)

// RangeScanLimit is how many rows of a prefix's range a search reads at
// most (by default; a store may pass its own) before it reads the prefix's
// bucket in rank order instead: below it, every match is at hand to rank;
// above it, the bucket yields the first matches in order after reading
// about MaxUserMatches times the bucket's share of matches, which is small
// when a prefix has that many.
const RangeScanLimit = 200

// SearchUserIDs answers a keyword search with run: the ranks of at most
// MaxUserMatches users, the exact matches first (the users holding one of
// k's exact terms) and then the rest, each group in rank order. Exact terms
// are looked up in rank order; each prefix of k is looked up as a range of
// at most RangeScanLimit rows, or straight through its bucket when it is a
// whole bucket (a keyword of TermBucketRunes characters), and through its
// bucket when its range holds more. With exactFirst (a store without round
// trips), the exact terms are looked up alone first and the prefixes only
// when fewer than MaxUserMatches users are exact, each prefix a TermRange
// and, if need be, a TermBucket after it; without, one step looks up both,
// each prefix a TermPrefix.
//
// scanLimit is the store's RangeScanLimit: where reading a range costs
// little per row and a bucket more, a higher one.
func SearchUserIDs(ctx context.Context, k posgate.UserKeyword, run RunTermQueries, exactFirst bool, scanLimit int) ([]posgate.UserRank, error) {
	var qs []TermQuery
	for _, t := range k.ExactTerms() {
		qs = append(qs, TermQuery{Kind: TermExact, Lo: t, Limit: posgate.MaxUserMatches})
	}
	exactQueries := len(qs)
	var answers [][]posgate.UserRank
	if exactFirst {
		var err error
		if answers, err = run(ctx, qs); err != nil {
			return nil, err
		}
		if exact := topRanks(slices.Concat(answers...), nil, posgate.MaxUserMatches); len(exact) == posgate.MaxUserMatches {
			return exact, nil
		}
		qs = qs[:0]
	}
	for _, p := range k.Prefixes() {
		if b := posgate.TermBucket(p); !exactFirst && b != p {
			qs = append(qs, TermQuery{Kind: TermPrefix, Lo: p, Hi: PrefixEnd(p), Bucket: posgate.TermBucket(p), Limit: posgate.MaxUserMatches,
				Scan: scanLimit + 1})
		} else if b == p {
			qs = append(qs, TermQuery{Kind: TermBucket, Lo: p, Hi: PrefixEnd(p), Bucket: b, Limit: posgate.MaxUserMatches})
		} else {
			qs = append(qs, TermQuery{Kind: TermRange, Lo: p, Hi: PrefixEnd(p), Limit: posgate.MaxUserMatches, Scan: scanLimit + 1})
		}
	}
	more, err := run(ctx, qs)
	if err != nil {
		return nil, err
	}
	if exactFirst {
		qs = append(make([]TermQuery, exactQueries), qs...)
	}
	answers = append(answers, more...)
	exact := topRanks(slices.Concat(answers[:exactQueries]...), nil, posgate.MaxUserMatches)
	if len(exact) == posgate.MaxUserMatches {
		return exact, nil
	}
	var buckets []TermQuery
	var others []posgate.UserRank
	for i, q := range qs[exactQueries:] {
		a := answers[exactQueries+i]
		if q.Kind == TermRange && q.Scanned > scanLimit {
			buckets = append(buckets, TermQuery{Kind: TermBucket, Lo: q.Lo, Hi: q.Hi, Bucket: posgate.TermBucket(q.Lo), Limit: posgate.MaxUserMatches})
			continue
		}
		others = append(others, a...)
	}
	if len(buckets) > 0 {
		answers, err := run(ctx, buckets)
		if err != nil {
			return nil, err
		}
		others = append(others, slices.Concat(answers...)...)
	}
	skip := make(map[string]bool, len(exact))
	for _, r := range exact {
		skip[r.ID] = true
	}
	return append(exact, topRanks(others, skip, posgate.MaxUserMatches-len(exact))...), nil
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
		if skip[r.ID] || (i > 0 && ranks[i-1].ID == r.ID) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// RankIDs returns the ids of ranks.
func RankIDs(ranks []posgate.UserRank) []string {
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

// CardUsers returns the users of a search's answer from their cards, read
// in the order of ids, as users of posSystemID and companyID: those that
// ids does not name (a user deleted between a search's lookups) are left
// out. Their times are not read (the answers show none).
func CardUsers(posSystemID, companyID string, ids []string, cards []*posgate.LoyaltyCard) []*posgate.LoyaltyUser {
	users := make([]posgate.LoyaltyUser, 0, len(cards))
	out := make([]*posgate.LoyaltyUser, 0, len(cards))
	i := 0
	for _, c := range cards {
		for i < len(ids) && ids[i] != c.ID {
			i++
		}
		if i == len(ids) {
			break // a card out of order: InOrder below
		}
		users = append(users, posgate.LoyaltyUser{POSSystemID: posSystemID, CompanyID: companyID, LoyaltyCard: *c})
		out = append(out, &users[len(users)-1])
	}
	if len(out) == len(cards) {
		return out
	}
	all := make([]*posgate.LoyaltyUser, len(cards))
	for j, c := range cards {
		all[j] = &posgate.LoyaltyUser{POSSystemID: posSystemID, CompanyID: companyID, LoyaltyCard: *c}
	}
	return InOrder(ids, all)
}

// UserSearchStatements are a store's statements of a keyword search, for
// a benchmark's floor (the same statements run bare, through the same
// driver). Exact, Count, Range, Bucket and Prefix are the lookups of
// SearchUserIDs' queries (a store has either Count and Range, or Prefix);
// UsersByID reads the answer's users. Each store's SQL names its
// parameters; ExactFirst and ScanLimit are what the store passes to
// SearchUserIDs.
type UserSearchStatements struct {
	Exact, Count, Range, Bucket, Prefix, UsersByID string
	ExactFirst                                     bool
	ScanLimit                                      int
}

// Package storekit is the plumbing that both SQL stores (internal/sqlite
// and internal/postgres) share beneath posgate.Store: the errors they build
// beyond posgate.NotFound and posgate.AlreadyExists, the batched session writer behind
// CreateSession, the company check of coupon and loyalty-user writes, and
// small helpers of their statements. Written once, the two stores cannot
// drift apart in what a client sees from them. Rules of the domain (how a
// keyword or an e-mail is normalised, which locations a coupon may name)
// are not here but in package posgate, beside their types; storekit imports
// no database driver, so that neither store depends on the other's.
package storekit

import (
	"context"

	"github.com/posgate/posgate"
)

// ReceiptPromotionNotFound is the ENOTFOUND error for an absent receipt
// promotion. It names the location, or the company for the company's
// default (locationID ""), since the two are set and removed apart.
func ReceiptPromotionNotFound(companyID, locationID string) *posgate.Error {
	if locationID == "" {
		return posgate.NotFound("receipt promotion of company", companyID)
	}
	return posgate.NotFound("receipt promotion of location", locationID)
}

// ReceiptPromotionOwnerNotFound is the ENOTFOUND error for a receipt
// promotion put for a location the company does not have, or for the
// default (locationID "") of a company that does not exist: the caller
// learns which of the two it got wrong.
func ReceiptPromotionOwnerNotFound(companyID, locationID string) *posgate.Error {
	if locationID == "" {
		return posgate.NotFound("company", companyID)
	}
	return posgate.NotFound("location", locationID)
}

// PromotionGivenTwice is the ECONFLICT error of a promotion import that
// names promotion id in two of its chunks: the import commits nothing rather
// than let the later item silently win.
func PromotionGivenTwice(id string) *posgate.Error {
	return posgate.Errorf(posgate.ECONFLICT, "promotion %q is given twice in this import", id)
}

// NullIfEmpty is the statement argument of an optional text column: NULL
// for "". An absent owner must be NULL for the foreign key to the loyalty
// user to pass, and absent e-mails and phones are NULL so that the partial
// indexes on them skip the many coupons that are owned through a user only.
func NullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// maxRune is the last code point: it sorts after every character.
const maxRune = "\U0010FFFF"

// PrefixEnd returns the end of the range of the strings that start with
// prefix: prefix <= s AND s < PrefixEnd(prefix) selects them through a
// B-tree index, in the order of code points that both stores' indexes keep.
func PrefixEnd(prefix string) string { return prefix + maxRune }

// PointRead returns ctx without its cancellation, for the reads of the POS
// hot paths that take microseconds (a coupon by its code, a page of active
// coupons, a page of the coupon search). With a cancellable context, database/sql and modernc.org/sqlite
// each start a goroutine per query to watch it, and pgx one per query too:
// together some 5 % of the CPU of a coupon lookup, to be able to stop a
// read that is over before a cancellation could reach it. The context's
// values (the transaction of Atomic) are kept.
func PointRead(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// PageTotal is the number of rows on all pages of a paged search, when the
// page read at offset (n rows of at most limit) tells it: a page that is
// not full and is not past the end ends the rows, so that they number
// offset + n. A full page, or an empty one past the first, does not tell
// (ok false): only then does a store count the rows with a statement of
// its own, so that the common page (a search answering a few coupons)
// costs no count beside its read.
func PageTotal(offset, limit, n int) (total int, ok bool) {
	if n < limit && (n > 0 || offset <= 0) {
		return max(offset, 0) + n, true
	}
	return 0, false
}

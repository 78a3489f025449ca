package posgate

import (
	"context"
	"time"
)

// Import kinds of the import log (docs/api.md §23's recent imports).
const (
	ImportKindPromotions = "promotions"
	ImportKindProducts   = "products"
	ImportKindCategories = "categories"
)

// ImportRecord is one finished import, written by the store in the
// import's own transaction, so that the log holds exactly the imports that
// committed (a rolled-back import leaves no row).
type ImportRecord struct {
	// Seq identifies the row and orders the log (newest last).
	Seq         int64
	POSSystemID string
	CompanyID   string
	Kind        string // an ImportKind*
	Created     int
	Updated     int
	// Failed is how many items the checks refused (the POS API stores the
	// others, docs/api.md §9.3, §17).
	Failed     int
	StartedAt  time.Time
	FinishedAt time.Time
	ClientID   string
	PersonID   string
	Channel    AuditChannel
}

// ImportLogStore reads the import log.
type ImportLogStore interface {
	// ListImports returns at most limit finished imports of a POS system,
	// newest first; companyIDs, when not empty, keeps only those companies'.
	ListImports(ctx context.Context, posSystemID string, companyIDs []string, limit int) ([]*ImportRecord, error)
}

// ImportMeta is what the service knows of an import and the store does
// not: who runs it and how many items failed. The service puts it into the
// context of the store's import call; the store copies it into the log row.
type ImportMeta struct {
	ClientID string
	PersonID string
	Failed   int
}

type importMetaKey struct{}

// WithImportMeta returns ctx carrying m for the store's import call.
func WithImportMeta(ctx context.Context, m ImportMeta) context.Context {
	return context.WithValue(ctx, importMetaKey{}, m)
}

// NewImportRecord builds the log row of an import the store is about to
// commit, from ctx's ImportMeta and origin (the channel; api when none).
func NewImportRecord(ctx context.Context, posSystemID, companyID, kind string, created, updated int, started, finished time.Time) *ImportRecord {
	m, _ := ctx.Value(importMetaKey{}).(ImportMeta)
	ch := AuditOriginFrom(ctx).Channel
	if !ch.Valid() {
		ch = ChannelAPI
	}
	return &ImportRecord{POSSystemID: posSystemID, CompanyID: companyID, Kind: kind, Created: created, Updated: updated,
		Failed: m.Failed, StartedAt: Timestamp(started), FinishedAt: Timestamp(finished), ClientID: m.ClientID, PersonID: m.PersonID, Channel: ch}
}

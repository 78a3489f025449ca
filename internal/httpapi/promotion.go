package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/importfile"
	"github.com/posgate/posgate/internal/service"
)

// Defaults of the import route's own limits (Config.MaxImportBodyBytes and
// Config.ImportTimeout).
const (
	// DefaultMaxImportBodyBytes fits 100,000 items of a realistic size as
	// JSON (about 600 bytes each) or XML (about twice that) with room to
	// spare.
	DefaultMaxImportBodyBytes = 256 << 20
	// DefaultImportTimeout is how long an import request may take to arrive
	// and be answered, in place of the server's 60 s: 256 MiB needs about
	// 4 Mbit/s to arrive in 10 minutes.
	DefaultImportTimeout = 10 * time.Minute
)

// importBody prepares the import route's request: its own, larger body cap
// and read and write deadlines extended to Config.ImportTimeout for this
// request only (the server's own timeouts suit the small POS requests), and
// an Idempotency-Key lease that outlasts them. It runs before the token is
// checked, so that a replay, which reads the retry's body to compare it,
// reads under the same cap and deadlines.
func (s *Server) importBody(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		deadline := time.Now().Add(s.cfg.ImportTimeout)
		if err := rc.SetReadDeadline(deadline); err == nil {
			rc.SetWriteDeadline(deadline)
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxImportBodyBytes)
		if r.Header[service.IdempotencyKeyHeader] != nil {
			r = withLease(r, s.cfg.ImportTimeout+service.DefaultIdempotencyLease)
		}
		next(w, r)
	}
}

// importPromotions imports a company's promotions (docs/api.md §9).
// It checks the content type, then asks the service to begin the import
// (which refuses an unknown, hidden, disabled or switched-off company)
// before reading the body, so that a request that cannot succeed is not
// read for nothing. The body is then decoded one item at a time while a
// second goroutine has the service check and stage them; only when the
// whole body has been read without error are they committed, in one
// transaction: a malformed body, too many items or a body over the cap
// store nothing.
func (s *Server) importPromotions(r *http.Request) (int, any, error) {
	ctx := r.Context()
	posSystemID, companyID := r.PathValue("posSystemId"), r.PathValue("posCompanyId")
	if err := codec.CheckContentType(r.Header.Get("Content-Type")); err != nil {
		return 0, nil, err
	}
	imp, err := s.svc.BeginPromotionImport(ctx, principal(ctx), posSystemID, companyID)
	if err != nil {
		return 0, nil, err
	}
	defer imp.Rollback()
	if err := declaredTooLarge(r, s.cfg.MaxImportBodyBytes); err != nil {
		return 0, nil, err
	}
	stage := newStager(ctx, func(row int, it *importfile.PromotionItem) error {
		return imp.Add(ctx, row, it.Promotion(posSystemID, companyID))
	})
	err = codec.StreamArray(r, "items", codec.Options{}, func(i int, it *importfile.PromotionItem) error {
		if err := imp.Count(i + 1); err != nil {
			return err
		}
		return stage.add(it)
	})
	if err2 := stage.close(); err == nil {
		err = err2
	}
	if err != nil {
		return 0, nil, err
	}
	// A large import's commit takes a while: say what it is waiting for.
	s.log.InfoContext(ctx, "promotion import: committing", slog.String("traceId", traceID(ctx)),
		slog.String("posSystemId", posSystemID), slog.String("posCompanyId", companyID), slog.Int("valid", imp.Valid()))
	return enveloped(imp.Commit(ctx))
}

// stager runs fn on every item, in order, on a goroutine of its own, fed in
// batches so that handing items over costs little.
type stager struct {
	ctx     context.Context
	batches chan []*importfile.PromotionItem
	batch   []*importfile.PromotionItem
	row     int
	done    chan error // fn's first error, or nil; then closed
	err     error
}

// stagerBatch is how many items go over at a time.
const stagerBatch = 256

func newStager(ctx context.Context, fn func(row int, it *importfile.PromotionItem) error) *stager {
	st := &stager{ctx: ctx, batches: make(chan []*importfile.PromotionItem, 4), done: make(chan error, 1)}
	go func() {
		var err error
		row := 0
		for batch := range st.batches {
			for _, it := range batch {
				row++
				if err == nil {
					err = fn(row, it)
				}
			}
		}
		st.done <- err
		close(st.done)
	}()
	return st
}

// add queues an item; it fails with fn's error once fn has failed.
func (st *stager) add(it *importfile.PromotionItem) error {
	st.batch = append(st.batch, it)
	if len(st.batch) < stagerBatch {
		return nil
	}
	return st.flush()
}

func (st *stager) flush() error {
	if len(st.batch) == 0 {
		return nil
	}
	select {
	case st.batches <- st.batch:
		st.batch = make([]*importfile.PromotionItem, 0, stagerBatch)
		return nil
	case err := <-st.done:
		st.err = err
		return err
	case <-st.ctx.Done():
		return st.ctx.Err()
	}
}

// close hands over the last items, waits until fn has seen every item and
// returns its error.
func (st *stager) close() error {
	err := st.flush()
	close(st.batches)
	if err2, ok := <-st.done; ok {
		err = err2
	} else if st.err != nil {
		err = st.err
	}
	return err
}

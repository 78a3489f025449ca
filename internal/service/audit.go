package service

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// The audit log (docs/api.md §22): every operator write runs through
// audited, which makes the change and appends its entry in one store
// transaction (posgate.AuditStore.Atomic), so that no change is without its
// entry and no entry outlives a change that rolled back.

// change is what an audited write tells about itself: its target, and the
// resource before and after (nil where it did not or does not exist).
type change struct {
	target        posgate.AuditTarget
	before, after any
	// skip is set by a write that turned out to change nothing (an
	// operator's refund replayed): no entry is made.
	skip bool
	// issued are the coupons the write issued, for the terminal channel's
	// CouponIssued (terminalEventsOf).
	issued []*posgate.Coupon
}

// audited runs write inside one store transaction with the audit entry of
// action. write must make its store calls with the context it is given;
// when it fails, nothing it wrote stays and no entry is made.
//
// The terminal channel's entries of the change (terminalEventsOf) are
// appended in the same transaction, and its streams woken once it commits.
func (s *Service) audited(ctx context.Context, p *posgate.Principal, action string, write func(ctx context.Context, c *change) error) error {
	var wake []string
	err := s.store.Atomic(ctx, func(ctx context.Context) error {
		var c change
		if err := write(ctx, &c); err != nil {
			return err
		}
		if c.skip {
			return nil
		}
		e, err := s.auditEntry(ctx, p, action, &c)
		if err != nil {
			return err
		}
		if wake, err = s.appendTerminalEvents(ctx, action, &c); err != nil {
			return err
		}
		return s.store.AppendAudit(ctx, e)
	})
	if err == nil {
		for _, k := range wake {
			s.feed.wake(k)
		}
	}
	return err
}

// auditEntry completes an entry from the principal, the origin the adapter
// put into ctx and the change.
func (s *Service) auditEntry(ctx context.Context, p *posgate.Principal, action string, c *change) (*posgate.AuditEntry, error) {
	o := posgate.AuditOriginFrom(ctx)
	if !o.Channel.Valid() {
		o = s.cfg.Origin
	}
	e := &posgate.AuditEntry{ID: uuid.NewString(), Time: posgate.Timestamp(s.now()), Actor: posgate.ActorOf(p),
		Channel: o.Channel, Action: action, Target: c.target, TraceID: o.TraceID, UserAgent: o.UserAgent}
	if !e.Channel.Valid() {
		e.Channel = posgate.ChannelAPI
	}
	var err error
	if e.Before, err = auditJSON(c.before); err != nil {
		return nil, err
	}
	if e.After, err = auditJSON(c.after); err != nil {
		return nil, err
	}
	return e, nil
}

// auditJSON renders a resource of an entry; nil is JSON null.
func auditJSON(v any) ([]byte, error) {
	b, err := encode.JSON(v)
	if err != nil {
		return nil, fmt.Errorf("audit: encode resource: %w", err)
	}
	return b, nil
}

// companyTarget is the target of a change to something of a company.
func companyTarget(typ, id, posSystemID, companyID string) posgate.AuditTarget {
	return posgate.AuditTarget{Type: typ, ID: id, POSSystemID: posSystemID, CompanyID: companyID}
}

// locationTarget is the target of a change to something of a location,
// which names the location too (a reader reaching only some locations can
// then be given their entries).
func locationTarget(typ, id, posSystemID, companyID, locationID string) posgate.AuditTarget {
	return posgate.AuditTarget{Type: typ, ID: id, POSSystemID: posSystemID, CompanyID: companyID, LocationID: locationID}
}

// Audit list paging (docs/api.md §22).
const (
	DefaultAuditPageSize = 50
	MaxAuditPageSize     = 500
)

// ListAuditRequest filters the audit log; empty fields do not filter.
type ListAuditRequest struct {
	Actor       string
	Action      string
	TargetType  string
	TargetID    string
	POSSystemID string
	CompanyID   string
	LocationID  string
	// From and To bound the time (RFC 3339): From <= time < To.
	From     string
	To       string
	Cursor   string
	PageSize *int

	from, to time.Time
	before   int64
}

// Validate checks the times, the cursor and the page size.
func (q *ListAuditRequest) Validate() error {
	v := posgate.ValidationError{}
	checkRange(v, "pageSize", q.PageSize, 1, MaxAuditPageSize)
	parse := func(field, s string, dst *time.Time) {
		if s == "" {
			return
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			v.Add(field, fmt.Sprintf("The %s parameter must be a date-time (RFC 3339).", field))
		}
		*dst = t.UTC()
	}
	parse("from", q.From, &q.from)
	parse("to", q.To, &q.to)
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || len(b) != 8 || int64(binary.BigEndian.Uint64(b)) <= 0 {
			v.Add("cursor", "The cursor parameter must be a nextCursor of an earlier answer.")
		} else {
			q.before = int64(binary.BigEndian.Uint64(b))
		}
	}
	return v.Err()
}

// AuditPage is one page of the audit log, newest first. NextCursor asks
// for the next (older) page; null on the last.
type AuditPage struct {
	Entries    []*posgate.AuditEntry `json:"entries"`
	NextCursor *string               `json:"nextCursor"`
}

// ListAudit pages the audit log as far as p reaches: an unrestricted
// operator sees every entry; one bound to a POS system sees the entries of
// that POS system, one restricted to companies only those of its
// companies, and a location manager only those of its locations (the whole
// installation's, the POS system's and the companies' own are left out,
// closed by default).
func (s *Service) ListAudit(ctx context.Context, p *posgate.Principal, req *ListAuditRequest) (*AuditPage, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	size := intOr(req.PageSize, DefaultAuditPageSize)
	q := posgate.AuditQuery{Actor: req.Actor, Action: req.Action, TargetType: req.TargetType, TargetID: req.TargetID,
		POSSystemID: req.POSSystemID, CompanyID: req.CompanyID, LocationID: req.LocationID, From: req.from, To: req.to, BeforeSeq: req.before, Limit: size + 1,
		ReachPOSSystemID: p.POSSystemID, ReachCompanyIDs: slices.Clone(p.CompanyIDs), ReachLocationIDs: slices.Clone(p.LocationIDs)}
	if (len(q.ReachCompanyIDs) > 0 || len(q.ReachLocationIDs) > 0) && q.ReachPOSSystemID == "" {
		// Company and location ids mean nothing without their POS system;
		// a principal restricted to those of no POS system reaches none.
		return &AuditPage{Entries: []*posgate.AuditEntry{}}, nil
	}
	list, err := s.store.ListAudit(ctx, q)
	if err != nil {
		return nil, err
	}
	page := &AuditPage{Entries: nonNil(list)}
	if len(list) > size {
		page.Entries = list[:size]
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(list[size-1].Seq))
		c := base64.RawURLEncoding.EncodeToString(b[:])
		page.NextCursor = &c
	}
	return page, nil
}

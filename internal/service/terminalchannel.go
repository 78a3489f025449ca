package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/posgate/posgate"
)

// The terminal channel (docs/api.md §25): a till's Server-Sent Events
// stream of what changed for it. Every event is an entry of the store's
// log (posgate.TerminalEventStore), appended in the transaction of the
// audited change it reports, so that a stream resumed with Last-Event-ID
// misses none and repeats none. A stream reads its terminal's entries
// after its cursor whenever it is woken: at once by a change made through
// this instance, by the watcher (WatchTerminalEvents) for a change made
// through another one, and at every heartbeat in any case.

// Settings parts a SettingsChanged names in its "changed" field.
const (
	ChangedCompany        = "company"
	ChangedLocation       = "location"
	ChangedTerminal       = "terminal"
	ChangedContent        = "content"
	ChangedLoyaltyProgram = "loyaltyProgram"
	ChangedPromotions     = "promotions"
	ChangedCatalogue      = "catalogue"
)

// TerminalFrame is one event as a stream sends it.
type TerminalFrame struct {
	ID   int64
	Type string
	Data []byte
}

// terminalBatch is how many entries a stream reads at a time.
const terminalBatch = 100

// settingsChanged is a SettingsChanged's data.
type settingsChanged struct {
	Changed       string `json:"changed"`
	PosLocationID string `json:"posLocationId,omitempty"`
}

// terminalEventsOf are the terminal channel's entries of an audited
// change (none for most).
func terminalEventsOf(action string, c *change, now time.Time) []*posgate.TerminalEvent {
	t := c.target
	settings := func(changed, locationID string) []*posgate.TerminalEvent {
		data, _ := json.Marshal(settingsChanged{Changed: changed, PosLocationID: locationID})
		return []*posgate.TerminalEvent{{POSSystemID: t.POSSystemID, CompanyID: t.CompanyID, LocationID: locationID,
			Type: posgate.TerminalSettingsChanged, Data: data, Time: now}}
	}
	switch action {
	case "company.update":
		return settings(ChangedCompany, "")
	case "location.update":
		return settings(ChangedLocation, t.ID)
	case "slide.create", "slide.update", "slide.delete", "carousel.update", "receipt-promotion.put", "receipt-promotion.delete":
		return settings(ChangedContent, t.LocationID)
	case "loyalty-program.update":
		return settings(ChangedLoyaltyProgram, "")
	case "catalogue.replace":
		return settings(ChangedCatalogue, "")
	case "terminal.enable", "terminal.disable":
		term, ok := c.after.(*posgate.Terminal)
		if !ok || term == nil {
			return nil
		}
		if action == "terminal.enable" {
			evs := settings(ChangedTerminal, term.LocationID)
			evs[0].TerminalID = term.ID
			return evs
		}
		data, _ := json.Marshal(map[string]string{"posLocationId": term.LocationID, "terminalId": term.ID})
		return []*posgate.TerminalEvent{{POSSystemID: t.POSSystemID, CompanyID: t.CompanyID, LocationID: term.LocationID,
			TerminalID: term.ID, Type: posgate.TerminalDisabled, Data: data, Time: now}}
	}
	var out []*posgate.TerminalEvent
	for _, cp := range c.issued {
		if cp.UserID == "" || cp.Status != posgate.CouponIssued {
			continue
		}
		data, _ := json.Marshal(displayCoupon(cp, now))
		out = append(out, &posgate.TerminalEvent{POSSystemID: cp.POSSystemID, CompanyID: cp.CompanyID, UserID: cp.UserID,
			Type: posgate.TerminalCouponIssued, Data: data, Time: now})
	}
	return out
}

// appendTerminalEvents adds the entries of an audited change to the log,
// in its transaction, and returns the keys of the companies to wake once
// it commits.
func (s *Service) appendTerminalEvents(ctx context.Context, action string, c *change) ([]string, error) {
	evs := terminalEventsOf(action, c, s.now())
	if len(evs) == 0 {
		return nil, nil
	}
	if err := s.store.AppendTerminalEvents(ctx, evs); err != nil {
		return nil, err
	}
	return []string{feedKey(evs[0].POSSystemID, evs[0].CompanyID)}, nil
}

// settingsChangedNow appends a company's SettingsChanged outside an
// audited change, once an import committed, and wakes its streams.
func (s *Service) settingsChangedNow(ctx context.Context, posSystemID, companyID, changed string) error {
	data, _ := json.Marshal(settingsChanged{Changed: changed})
	evs := []*posgate.TerminalEvent{{POSSystemID: posSystemID, CompanyID: companyID, Type: posgate.TerminalSettingsChanged,
		Data: data, Time: s.now()}}
	if err := s.store.AppendTerminalEvents(context.WithoutCancel(ctx), evs); err != nil {
		return err
	}
	s.feed.wake(feedKey(posSystemID, companyID))
	return nil
}

func feedKey(posSystemID, companyID string) string { return posSystemID + "/" + companyID }

// TerminalFeed wakes the open streams of an instance: at once for a
// change made through it, through its watcher (Watch) for the others. The
// wiring (internal/app) makes one per instance and gives it to the service
// and the HTTP layer (which ends the streams when it drains).
type TerminalFeed struct {
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	closed chan struct{}
	once   sync.Once
	kick   chan struct{}
}

// NewTerminalFeed returns a feed with no streams.
func NewTerminalFeed() *TerminalFeed {
	return &TerminalFeed{subs: map[string]map[chan struct{}]struct{}{}, closed: make(chan struct{}), kick: make(chan struct{}, 1)}
}

func (f *TerminalFeed) subscribe(key string) chan struct{} {
	c := make(chan struct{}, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs[key] == nil {
		f.subs[key] = map[chan struct{}]struct{}{}
	}
	f.subs[key][c] = struct{}{}
	return c
}

func (f *TerminalFeed) unsubscribe(key string, c chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs[key], c)
	if len(f.subs[key]) == 0 {
		delete(f.subs, key)
	}
}

// wake wakes the streams of the company key; "" wakes every stream.
func (f *TerminalFeed) wake(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, subs := range f.subs {
		if key != "" && k != key {
			continue
		}
		for c := range subs {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// Close ends every open stream of this instance (the graceful drain,
// docs/api.md §16.4): their tills reconnect, to another instance or to this
// one once it runs again.
func (f *TerminalFeed) Close() { f.once.Do(func() { close(f.closed) }) }

// WakeWatcher makes the watcher read the log at once (a NOTIFY of an
// append arrived).
func (f *TerminalFeed) WakeWatcher(string) {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Watch reads the entries appended to store's log by any instance, every
// poll and whenever WakeWatcher is called, and wakes the streams of their
// companies, until ctx is done.
func (f *TerminalFeed) Watch(ctx context.Context, store posgate.TerminalEventStore, poll time.Duration) {
	t := time.NewTicker(poll)
	defer t.Stop()
	cursor := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-f.kick:
		}
		if cursor < 0 {
			last, _, err := store.TerminalEventHorizon(ctx)
			if err != nil {
				continue
			}
			cursor = last
			f.wake("") // what came before the watcher began
			continue
		}
		for {
			evs, err := store.TerminalEventsAfter(ctx, cursor, 1000)
			if err != nil {
				break
			}
			keys := map[string]bool{}
			for _, e := range evs {
				keys[feedKey(e.POSSystemID, e.CompanyID)], cursor = true, e.ID
			}
			for k := range keys {
				f.wake(k)
			}
			if len(evs) < 1000 {
				break
			}
		}
	}
}

// TerminalChannel is one till's open stream.
type TerminalChannel struct {
	s                                              *Service
	posSystemID, companyID, locationID, terminalID string
	key                                            string
	cursor                                         int64
	wake                                           chan struct{}
	expires                                        time.Time
}

// OpenTerminalChannel opens the stream of a registered terminal of a
// location p reaches, resuming after lastEventID ("" for the events from
// now on). The frames returned are to be sent first: a Resync when
// lastEventID is older than the log keeps (or was never given by it).
func (s *Service) OpenTerminalChannel(ctx context.Context, p *posgate.Principal, posSystemID, locationID, terminalID, lastEventID string) (*TerminalChannel, []TerminalFrame, error) {
	after := int64(-1)
	if lastEventID != "" {
		n, err := strconv.ParseInt(lastEventID, 10, 64)
		if err != nil || n < 0 {
			v := posgate.ValidationError{}
			v.Add("Last-Event-ID", "The Last-Event-ID must be the id of an event of this channel.")
			return nil, nil, v.Err()
		}
		after = n
	}
	loc, term, _, err := s.posTerminal(ctx, p, posSystemID, locationID, terminalID, posgate.FeatureTransactions)
	if err != nil {
		return nil, nil, err
	}
	c := &TerminalChannel{s: s, posSystemID: posSystemID, companyID: loc.CompanyID, locationID: loc.ID, terminalID: term.ID,
		key: feedKey(posSystemID, loc.CompanyID), expires: p.ExpiresAt}
	// Subscribed before the horizon is read: an entry committed after it
	// wakes the stream.
	c.wake = s.feed.subscribe(c.key)
	last, deleted, err := s.store.TerminalEventHorizon(ctx)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	c.cursor = last
	var first []TerminalFrame
	switch {
	case after < 0:
	case after < deleted || after > last:
		data, _ := json.Marshal(map[string]string{"reason": resyncReason(after, last)})
		first = append(first, TerminalFrame{ID: last, Type: posgate.TerminalResync, Data: data})
	default:
		c.cursor = after
	}
	return c, first, nil
}

func resyncReason(after, last int64) string {
	if after > last {
		return fmt.Sprintf("Event %d was never sent on this channel.", after)
	}
	return fmt.Sprintf("Events after %d are no longer kept.", after)
}

// Wake is signalled when the stream may have new events.
func (c *TerminalChannel) Wake() <-chan struct{} { return c.wake }

// Closed is closed when the instance ends its streams.
func (c *TerminalChannel) Closed() <-chan struct{} { return c.s.feed.closed }

// TTL is how long the stream may last: until its access token expires.
// Zero: no bound.
func (c *TerminalChannel) TTL() time.Duration {
	if c.expires.IsZero() {
		return 0
	}
	return max(c.expires.Sub(c.s.now()), time.Millisecond)
}

// Close ends the stream's subscription.
func (c *TerminalChannel) Close() { c.s.feed.unsubscribe(c.key, c.wake) }

// Next returns the terminal's events after the cursor (at most
// terminalBatch) and moves the cursor past them. A CouponIssued reaches
// the terminal only when its customer is that of the terminal's open
// session; the others are passed over.
func (c *TerminalChannel) Next(ctx context.Context) ([]TerminalFrame, error) {
	evs, err := c.s.store.TerminalEvents(ctx, c.posSystemID, c.companyID, c.locationID, c.terminalID, c.cursor, terminalBatch)
	if err != nil {
		return nil, err
	}
	var customer string
	var looked bool
	out := make([]TerminalFrame, 0, len(evs))
	for _, e := range evs {
		c.cursor = e.ID
		if e.Type == posgate.TerminalCouponIssued {
			if !looked {
				if customer, err = c.s.openCustomer(ctx, c.posSystemID, c.locationID, c.terminalID); err != nil {
					return nil, err
				}
				looked = true
			}
			if customer == "" || e.UserID != customer {
				continue
			}
		}
		out = append(out, TerminalFrame{ID: e.ID, Type: e.Type, Data: e.Data})
	}
	return out, nil
}

// More reports whether the last Next may have left events behind.
func (c *TerminalChannel) More(n int) bool { return n >= terminalBatch }

// openCustomer is the customer of the terminal's open session: the one its
// newest startInteraction naming a customer named, while that session has
// not expired and no transaction links it; "" for none.
func (s *Service) openCustomer(ctx context.Context, posSystemID, locationID, terminalID string) (string, error) {
	tc, err := s.store.FindTerminalCustomer(ctx, posSystemID, locationID, terminalID)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if !s.now().Before(tc.ExpiresAt) {
		return "", nil
	}
	_, err = s.store.FindTransactionBySession(ctx, tc.SessionID)
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return tc.UserID, nil
	case err != nil:
		return "", err
	}
	return "", nil
}

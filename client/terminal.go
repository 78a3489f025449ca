package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// TerminalEvent is one event of a terminal's channel (docs/api.md §25):
// SettingsChanged, CouponIssued, TerminalDisabled or Resync, with its id
// and its JSON data.
type TerminalEvent struct {
	ID   string          `json:"id"`
	Type string          `json:"event"`
	Data json.RawMessage `json:"data"`
}

// TerminalStream is one open connection of a terminal's channel; Next
// reads its events one by one. GetTerminalEvents opens it; WatchTerminal
// is the loop that reconnects.
type TerminalStream struct {
	body  io.ReadCloser
	r     *bufio.Reader
	last  string
	retry time.Duration
	idle  *time.Timer // closes a connection silent for StreamIdleTimeout
}

// StreamIdleTimeout is how long a terminal stream may stay silent (the
// server sends a heartbeat every 15 s) before the client takes the
// connection for lost and closes it.
const StreamIdleTimeout = 45 * time.Second

// LastEventID is the id of the last event read (or the one the stream was
// opened after): what a reconnection sends as Last-Event-ID.
func (s *TerminalStream) LastEventID() string { return s.last }

// Close closes the connection.
func (s *TerminalStream) Close() error {
	s.idle.Stop()
	return s.body.Close()
}

// Next reads the next event, passing over heartbeats; io.EOF when the
// server ended the stream.
func (s *TerminalStream) Next() (*TerminalEvent, error) {
	ev := &TerminalEvent{}
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		s.idle.Reset(StreamIdleTimeout)
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if data == nil {
				ev = &TerminalEvent{}
				continue
			}
			ev.Data = json.RawMessage(strings.Join(data, "\n"))
			if ev.ID != "" {
				s.last = ev.ID
			}
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue // a heartbeat
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Type = value
		case "data":
			data = append(data, value)
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// GetTerminalEvents opens the channel of a terminal (operation
// getTerminalEvents), resuming after lastEventID ("" for the events from
// now on). The connection stays open until Close, the context's end or
// the server's; it is not retried: WatchTerminal is.
func (c *Client) GetTerminalEvents(ctx context.Context, posSystemID, posLocationID, terminalID, lastEventID string) (*TerminalStream, error) {
	path := "/pos/" + url.PathEscape(posSystemID) + "/location/" + url.PathEscape(posLocationID) + "/terminal/" +
		url.PathEscape(terminalID) + "/events"
	token := ""
	if c.tokens != nil {
		t, err := c.tokens.Token(ctx)
		if err != nil {
			return nil, fmt.Errorf("posgate client: getting an access token: %w", err)
		}
		token = t
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	// The client's own http.Client may bound a whole answer's time: a
	// stream is read without such a bound, on the same transport.
	hc := &http.Client{Transport: c.hc.Transport, Jar: c.hc.Jar, CheckRedirect: c.hc.CheckRedirect}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("posgate client: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode == http.StatusUnauthorized && token != "" {
			if inv, ok := c.tokens.(Invalidator); ok {
				inv.Invalidate(token)
			}
		}
		return nil, newError(http.MethodGet, path, resp.StatusCode, resp.Header, b)
	}
	return &TerminalStream{body: resp.Body, r: bufio.NewReader(resp.Body), last: lastEventID, retry: time.Second,
		idle: time.AfterFunc(StreamIdleTimeout, func() { resp.Body.Close() })}, nil
}

// WatchTerminal calls fn with every event of a terminal's channel, in
// order, until ctx is done (it then returns ctx's error) or fn returns an
// error (returned). A connection that ends or fails is opened again after
// the server's retry delay (backing off while attempts fail, and after
// Retry-After on 429 and 503) with the last id fn was given as
// Last-Event-ID, so that fn sees every event once. A 400, 403 or 404 ends
// the watch with that error.
func (c *Client) WatchTerminal(ctx context.Context, posSystemID, posLocationID, terminalID, lastEventID string, fn func(*TerminalEvent) error) error {
	failures := 0
	for {
		s, err := c.GetTerminalEvents(ctx, posSystemID, posLocationID, terminalID, lastEventID)
		wait := time.Second
		if err == nil {
			failures = 0
			for {
				ev, rerr := s.Next()
				if rerr != nil {
					break
				}
				if ferr := fn(ev); ferr != nil {
					s.Close()
					return ferr
				}
				lastEventID = s.LastEventID()
			}
			s.Close()
			wait = s.retry
		} else {
			var apiErr *Error
			if errors.As(err, &apiErr) {
				switch apiErr.StatusCode {
				case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound:
					return err
				}
			}
			failures++
			wait = c.backoff(failures)
			if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
				wait = apiErr.RetryAfter
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if werr := c.wait(ctx, wait); werr != nil {
			return werr
		}
	}
}

package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/posgate/posgate/internal/service"
)

// Defaults of the terminal channel's settings (docs/api.md §25).
const (
	// DefaultStreamHeartbeat is how often an idle stream sends a comment
	// line, so that proxies and the till see it alive; it also reads the
	// log, whatever woke it or not.
	DefaultStreamHeartbeat = 15 * time.Second
	// DefaultMaxStreams bounds the streams open on an instance, and
	// DefaultMaxClientStreams those of one API client on it.
	DefaultMaxStreams       = 2000
	DefaultMaxClientStreams = 500
	// streamWriteTimeout bounds each write of a stream (the server's
	// WriteTimeout would end the stream otherwise): a till that stops
	// reading for that long is disconnected.
	streamWriteTimeout = 30 * time.Second
	// streamRetry is the reconnection delay a stream asks for (the SSE
	// "retry" field), in milliseconds.
	streamRetry = 1000
	// streamRetryAfter is the Retry-After of a stream refused beyond a
	// bound, in seconds.
	streamRetryAfter = "5"
)

// streamBounds counts the open streams of the instance and of each client.
type streamBounds struct {
	mu                 sync.Mutex
	total              int
	byClient           map[string]int
	maxTotal, maxOfOne int
}

// admit takes a stream for client; 0 and a release func, or the status of
// the refusal (429: the client's bound, 503: the instance's).
func (b *streamBounds) admit(client string) (int, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byClient[client] >= b.maxOfOne {
		return http.StatusTooManyRequests, nil
	}
	if b.total >= b.maxTotal {
		return http.StatusServiceUnavailable, nil
	}
	b.total++
	b.byClient[client]++
	return 0, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.total--
		if b.byClient[client]--; b.byClient[client] == 0 {
			delete(b.byClient, client)
		}
	}
}

// OpenStreams is the number of terminal channel streams open on this
// instance.
func (s *Server) OpenStreams() int {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	return s.streams.total
}

// terminalEvents serves a terminal's channel (docs/api.md §25): Server-Sent
// Events until the till goes, its token expires or the instance drains.
func (s *Server) terminalEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := principal(ctx)
	if s.draining.Load() {
		s.refuseStream(w, r, http.StatusServiceUnavailable, "1", "This instance is shutting down; reconnect.")
		return
	}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("lastEventId")
	}
	ch, first, err := s.svc.OpenTerminalChannel(ctx, p, r.PathValue("posSystemId"), r.PathValue("posLocationId"), r.PathValue("terminalId"), last)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer ch.Close()
	status, release := s.streams.admit(p.ClientID)
	switch status {
	case http.StatusTooManyRequests:
		s.refuseStream(w, r, status, streamRetryAfter, "This client has "+strconv.Itoa(s.streams.maxOfOne)+
			" terminal streams open on this instance, its limit; close one or retry later.")
		return
	case http.StatusServiceUnavailable:
		s.refuseStream(w, r, status, streamRetryAfter, "This instance serves as many terminal streams as it can; retry later.")
		return
	}
	defer release()
	giveSlotBack(r) // a stream would hold it for hours
	s.stream(w, r, ch, first)
}

// stream writes the frames of ch until the stream ends.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, ch *service.TerminalChannel, first []service.TerminalFrame) {
	ctx := r.Context()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the server's ReadTimeout would end it too
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var buf bytes.Buffer
	send := func() bool {
		if err := rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
			return false
		}
		_, err := w.Write(buf.Bytes())
		buf.Reset()
		return err == nil && rc.Flush() == nil
	}
	buf.WriteString("retry: " + strconv.Itoa(streamRetry) + "\n\n")
	writeFrames(&buf, first)
	if !send() {
		return
	}
	var expired <-chan time.Time
	if ttl := ch.TTL(); ttl > 0 {
		t := time.NewTimer(ttl)
		defer t.Stop()
		expired = t.C
	}
	beat := time.NewTicker(s.cfg.StreamHeartbeat)
	defer beat.Stop()
	// The first read is at once: a resumed stream has its missed events
	// waiting.
	for atOnce := true; ; atOnce = false {
		heartbeat := false
		if !atOnce {
			select {
			case <-ctx.Done():
				return
			case <-ch.Closed():
				return
			case <-expired:
				return
			case <-beat.C:
				heartbeat = true
			case <-ch.Wake():
			}
		}
		for {
			frames, err := ch.Next(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log.WarnContext(ctx, "terminal stream: read events", slog.String("traceId", traceID(ctx)), slog.Any("err", err))
				}
				return // the till reconnects and resumes
			}
			writeFrames(&buf, frames)
			if !ch.More(len(frames)) {
				break
			}
		}
		if buf.Len() == 0 && heartbeat {
			buf.WriteString(": heartbeat\n\n")
		}
		if buf.Len() > 0 && !send() {
			return
		}
	}
}

// writeFrames writes frames in the SSE format: id, event and one data line
// (the data is JSON, which holds no newline).
func writeFrames(buf *bytes.Buffer, frames []service.TerminalFrame) {
	for _, f := range frames {
		buf.WriteString("id: ")
		buf.WriteString(strconv.FormatInt(f.ID, 10))
		buf.WriteString("\nevent: ")
		buf.WriteString(f.Type)
		buf.WriteString("\ndata: ")
		buf.Write(f.Data)
		buf.WriteString("\n\n")
	}
}

// refuseStream answers a stream beyond a bound, or on a draining instance.
func (s *Server) refuseStream(w http.ResponseWriter, r *http.Request, status int, retryAfter, detail string) {
	if status == http.StatusTooManyRequests {
		s.obs.RateLimited("streams")
	} else {
		s.obs.Shed("streams")
	}
	w.Header().Set("Retry-After", retryAfter)
	writeProblem(w, r, status, detail, nil)
}

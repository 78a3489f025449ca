package app

import (
	"context"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// DefaultTerminalPoll is how often an instance reads the terminal
// channel's log for entries other instances appended (docs/decisions.md,
// "The terminal channel"): the longest a change made through another
// instance waits to reach a stream when no NOTIFY arrives.
const DefaultTerminalPoll = time.Second

// startTerminalChannel starts the terminal channel's background work until
// bg is done: the watcher that wakes the streams of this instance for
// entries any instance appended, and PostgreSQL's LISTEN that wakes it at
// once (sweepSessions deletes the entries past
// posgate.TerminalEventRetention).
func startTerminalChannel(bg context.Context, cfg Config, store posgate.Store, feed *service.TerminalFeed) {
	poll := cfg.TerminalPoll
	if poll <= 0 {
		poll = DefaultTerminalPoll
	}
	go feed.Watch(bg, store, poll)
	if l, ok := store.(interface {
		ListenTerminalEvents(ctx context.Context, wake func(string))
	}); ok {
		go l.ListenTerminalEvents(bg, feed.WakeWatcher)
	}
}

package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
)

// demoResetPoll is how often a demo server looks for a reset of its demo
// data made by another process: one indexed read.
const demoResetPoll = time.Second

// watchDemoReset records this demo server's mark in the store
// (posgate.SandboxMarks) and then, until ctx is done, checks it every
// demoResetPoll. A reset of the demo data (posgate demo reset, or another
// serve --demo --reset on the same store) deletes every mark: the server
// then starts its sandbox clock at the real time again, calls restarted (the
// identity provider forgets what it remembered by the later time) and
// records its mark again (docs/api.md §20.1).
func watchDemoReset(ctx, bg context.Context, store posgate.Store, clock *posgate.SandboxClock, restarted func(), log *slog.Logger) error {
	marks, ok := store.(posgate.SandboxMarks)
	if !ok {
		return fmt.Errorf("demo: the store %T keeps no sandbox marks", store)
	}
	id := uuid.NewString()
	if err := marks.PutSandboxMark(ctx, id); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	go func() {
		t := time.NewTicker(demoResetPoll)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
			}
			ok, err := marks.HasSandboxMark(bg, id)
			if err != nil || ok {
				if err != nil && bg.Err() == nil {
					log.Warn("demo: checking for a reset of the demo data", slog.Any("err", err))
				}
				continue
			}
			clock.Restart()
			restarted()
			log.Info("demo: the demo data were reset; the sandbox clock is at the real time again")
			if err := marks.PutSandboxMark(bg, id); err != nil && bg.Err() == nil {
				log.Warn("demo: recording the sandbox mark", slog.Any("err", err))
			}
		}
	}()
	return nil
}

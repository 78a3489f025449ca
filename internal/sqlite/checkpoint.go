package sqlite

import (
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointInterval is how often the checkpointer copies the WAL into the
// database file. At startInteraction's peak the WAL grows by a few MB a
// second, so it stays small; SQLite's own default would checkpoint every
// 1000 pages, inside the commit of whichever write crossed that mark.
const checkpointInterval = 100 * time.Millisecond

// checkpointer runs PRAGMA wal_checkpoint(PASSIVE) on a connection of its
// own, beside the writer: a passive checkpoint takes no write lock, so
// commits go on while it copies and syncs. It only runs when the WAL has
// grown since its last run.
type checkpointer struct {
	db      *sql.DB
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once

	runs   atomic.Int64 // checkpoints that copied frames, for tests
	copied atomic.Int64 // frames copied in all, for tests
}

func newCheckpointer(dsn string, interval time.Duration) (*checkpointer, error) {
	db, err := sql.Open("sqlite", withParams(dsn, ckptParams))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	c := &checkpointer{db: db, stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.run(interval)
	return c, nil
}

func (c *checkpointer) run(interval time.Duration) {
	defer close(c.stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.checkpoint()
		}
	}
}

// checkpoint copies what it can of the WAL; errors (a busy database) are
// left for the next tick.
func (c *checkpointer) checkpoint() {
	var busy, log, done int64
	if err := c.db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil {
		return
	}
	if done > 0 {
		c.runs.Add(1)
		c.copied.Add(done)
	}
}

// close stops the checkpointer; the last connection to close the database
// checkpoints what is left.
func (c *checkpointer) close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.stopped
	if err := c.db.Close(); err != nil {
		return fmt.Errorf("sqlite: close checkpointer: %w", err)
	}
	return nil
}

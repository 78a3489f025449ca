package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/posgate/posgate"
)

// TestUnavailableErrors: the errors of a database that cannot be reached
// or dropped the connection are EUNAVAILABLE (503), with their cause kept
// for the log; the others keep their meaning.
func TestUnavailableErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"pgbouncer's server conn crashed", &pgconn.PgError{Code: "08P01", Message: "server conn crashed?"}, posgate.EUNAVAILABLE},
		{"connection failure", &pgconn.PgError{Code: "08006"}, posgate.EUNAVAILABLE},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, posgate.EUNAVAILABLE},
		{"the database is starting", &pgconn.PgError{Code: "57P03"}, posgate.EUNAVAILABLE},
		{"a write on a standby", &pgconn.PgError{Code: "25006"}, posgate.EUNAVAILABLE},
		{"connection closed mid-statement", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), posgate.EUNAVAILABLE},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, posgate.EUNAVAILABLE},
		{"unique violation", &pgconn.PgError{Code: "23505"}, posgate.EINTERNAL},
		{"syntax error", &pgconn.PgError{Code: "42601"}, posgate.EINTERNAL},
		{"no rows", pgx.ErrNoRows, posgate.EINTERNAL},
		{"the request ended", context.Canceled, posgate.EINTERNAL},
		{"its deadline passed", fmt.Errorf("x: %w", context.DeadlineExceeded), posgate.EINTERNAL},
	} {
		err := wrap(c.err, "op")
		if got := posgate.ErrorCode(err); got != c.want {
			t.Errorf("%s: code %q, want %q", c.name, got, c.want)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%s: the cause is lost: %v", c.name, err)
		}
	}
	if wrap(nil, "op") != nil {
		t.Error("wrap(nil) is not nil")
	}
}

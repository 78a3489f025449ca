package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// BackupInfo describes a backup file: its size and the newest schema
// migration it holds.
type BackupInfo struct {
	File          string `json:"file"`
	Bytes         int64  `json:"bytes"`
	SchemaVersion int    `json:"schemaVersion"`
}

// Backup writes a consistent copy of the database dsn (a path or a file:
// URI) to the new file to, while posgate keeps serving from it: VACUUM
// INTO reads one snapshot of the database (a read transaction, which WAL
// lets run beside the writer), so the copy holds every transaction
// committed before it began and none after, and writers are not held up.
// The copy is written beside to under a temporary name, checked (PRAGMA
// integrity_check), synced and then renamed, so that to is either absent
// or a whole backup. An existing to is refused.
func Backup(ctx context.Context, dsn, to string) (*BackupInfo, error) {
	src, err := filePath(dsn)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	if _, err := os.Lstat(to); err == nil {
		return nil, fmt.Errorf("sqlite: backup: %s already exists; name a new file", to)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	tmp, err := tempBeside(to)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp) // a no-op once renamed
	db, err := sql.Open("sqlite", withParams(dsn, "_busy_timeout=5000"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	info, err := Check(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: the copy fails its check: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, to); err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	if err := syncDir(filepath.Dir(to)); err != nil {
		return nil, err
	}
	info.File = to
	return info, nil
}

// Restore makes the database dsn a copy of the backup file from. The
// posgate processes using dsn must be stopped first: the database file is
// replaced (and its -wal and -shm files removed), which a running server
// would not notice. An existing database is replaced only with force.
// The backup is checked before anything is touched; the new database file
// is written under a temporary name, synced and renamed into place.
func Restore(ctx context.Context, from, dsn string, force bool) (*BackupInfo, error) {
	dst, err := filePath(dsn)
	if err != nil {
		return nil, err
	}
	info, err := Check(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("sqlite: restore: %s is not a usable backup: %w", from, err)
	}
	if _, err := os.Lstat(dst); err == nil && !force {
		return nil, fmt.Errorf("sqlite: restore: %s exists; stop every posgate that uses it, then restore with --force to replace it", dst)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sqlite: restore: %w", err)
	}
	tmp, err := tempBeside(dst)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := copyFile(from, tmp); err != nil {
		return nil, fmt.Errorf("sqlite: restore: %w", err)
	}
	// The old database's WAL must not be applied to the restored file.
	for _, side := range []string{dst + "-wal", dst + "-shm"} {
		if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sqlite: restore: %w", err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return nil, fmt.Errorf("sqlite: restore: %w", err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return nil, err
	}
	info.File = dst
	return info, nil
}

// Check opens the SQLite file path read-only and checks that it is whole
// (PRAGMA integrity_check) and a posgate database (it has posgate's
// schema_migrations); it answers its size and schema version.
func Check(ctx context.Context, path string) (*BackupInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&result); err != nil {
		return nil, err
	}
	if result != "ok" {
		return nil, fmt.Errorf("integrity check: %s", result)
	}
	info := &BackupInfo{File: path, Bytes: st.Size()}
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&info.SchemaVersion); err != nil {
		return nil, fmt.Errorf("not a posgate database: %w", err)
	}
	return info, nil
}

// filePath is the file a SQLite dsn names: a path, or the path of a file:
// URI. In-memory databases have no file to back up.
func filePath(dsn string) (string, error) {
	p := dsn
	if rest, ok := strings.CutPrefix(dsn, "file:"); ok {
		u, err := url.Parse("file:" + rest)
		if err != nil {
			return "", fmt.Errorf("sqlite: %q: %w", dsn, err)
		}
		if u.Query().Get("mode") == "memory" {
			return "", fmt.Errorf("sqlite: %q is an in-memory database", dsn)
		}
		p = u.Opaque
		if p == "" {
			p = u.Path
		}
	}
	if p == "" || p == ":memory:" {
		return "", fmt.Errorf("sqlite: %q names no database file", dsn)
	}
	return p, nil
}

// tempBeside returns a new, absent file name in the directory of path,
// where a rename onto path is atomic.
func tempBeside(path string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	name := f.Name()
	f.Close()
	// VACUUM INTO wants a file that does not exist (or is empty).
	if err := os.Remove(name); err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return name, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sqlite: sync %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sqlite: sync %s: %w", dir, err)
	}
	return nil
}

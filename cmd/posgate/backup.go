package main

import (
	"context"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/sqlite"
)

// errPostgresBackup points PostgreSQL users at PostgreSQL's own tools:
// posgate's backup commands copy a SQLite file.
var errPostgresBackup = usagef("backup and restore copy a SQLite database; back PostgreSQL up with its own tools (pg_dump, or a base backup and WAL archiving: docs/deployment.md)")

// cmdBackup writes a consistent copy of a SQLite store to a new file while
// posgate keeps serving from it (sqlite.Backup).
func cmdBackup(ctx context.Context, env *cli, args []string) error {
	fs := env.newFlags("backup")
	sf := addStoreFlags(fs)
	to := fs.String("to", "", "the backup file to write (must not exist)")
	if _, err := env.parseArgs(fs, "backup", args, 0); err != nil {
		return err
	}
	if *to == "" {
		return usagef("backup needs --to FILE")
	}
	if app.IsPostgres(*sf.database) {
		return errPostgresBackup
	}
	info, err := sqlite.Backup(ctx, *sf.database, *to)
	if err != nil {
		return inDatabase(*sf.database, err)
	}
	return env.say(info, "backed %s up to %s (%d bytes, schema version %d)\n", redact(*sf.database), info.File, info.Bytes, info.SchemaVersion)
}

// cmdRestore makes a SQLite store a copy of a backup file; the servers on
// it must be stopped (sqlite.Restore).
func cmdRestore(ctx context.Context, env *cli, args []string) error {
	fs := env.newFlags("restore")
	sf := addStoreFlags(fs)
	from := fs.String("from", "", "the backup file to restore (written by posgate backup)")
	force := fs.Bool("force", false, "replace an existing database (stop every posgate that uses it first)")
	if _, err := env.parseArgs(fs, "restore", args, 0); err != nil {
		return err
	}
	if *from == "" {
		return usagef("restore needs --from FILE")
	}
	if app.IsPostgres(*sf.database) {
		return errPostgresBackup
	}
	info, err := sqlite.Restore(ctx, *from, *sf.database, *force)
	if err != nil {
		return inDatabase(*sf.database, err)
	}
	return env.say(info, "restored %s from %s (%d bytes, schema version %d); posgate migrates it at its next start if it is older\n",
		info.File, *from, info.Bytes, info.SchemaVersion)
}

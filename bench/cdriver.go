//go:build cgosqlite

package main

// The C SQLite driver, for the floors' -floor-driver sqlite3 (bench built
// with -tags cgosqlite and CGO): the driver comparison of docs/decisions.md.
import _ "github.com/mattn/go-sqlite3"

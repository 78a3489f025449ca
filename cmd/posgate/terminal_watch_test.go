package main

import (
	"testing"
)

// TestTerminalWatchCommand: posgate terminal watch prints a terminal's
// events, here resumed from the start of the channel's log, and stops
// after --count.
func TestTerminalWatchCommand(t *testing.T) {
	base, _ := serveDemo(t)
	ops := map[string]string{"POSGATE_SERVER": base} // the demo operator and POS client, by default on a loopback server
	mustCLI(t, ops, "terminal", "disable", "TERM-05", "--pos", "clover", "--location", "LOC123")
	mustCLI(t, ops, "terminal", "enable", "TERM-05", "--pos", "clover", "--location", "LOC123")
	out := mustCLI(t, ops, "terminal", "watch", "TERM-05", "--pos", "clover", "--location", "LOC123", "--last-event-id", "0", "--count", "2")
	want := `1 TerminalDisabled {"posLocationId":"LOC123","terminalId":"TERM-05"}` + "\n" +
		`2 SettingsChanged {"changed":"terminal","posLocationId":"LOC123"}` + "\n"
	if out != want {
		t.Fatalf("terminal watch:\n%s\nwant:\n%s", out, want)
	}
	out = mustCLI(t, ops, "terminal", "watch", "TERM-05", "--pos", "clover", "--location", "LOC123", "--last-event-id", "1", "--count", "1", "--output", "json")
	if want := `{"id":"2","event":"SettingsChanged","data":{"changed":"terminal","posLocationId":"LOC123"}}` + "\n"; out != want {
		t.Fatalf("terminal watch --output json: %q, want %q", out, want)
	}
	if _, err := runCLI(t, ops, "terminal", "watch", "TERM-404", "--pos", "clover", "--location", "LOC123"); err == nil ||
		describe(err) != "Terminal 'TERM-404' is not registered at location 'LOC123'. (server "+base+")" {
		t.Fatalf("an unknown terminal: %v", err)
	}
}

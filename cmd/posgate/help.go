package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// demoFlags are the flags every example uses: the demo's data set, on the
// demo server (`posgate serve --demo`, which the operator commands reach
// at http://localhost:8080 with the demo's operator client by default).
const demoFlags = "--pos clover --company demo-company"

// examples holds one working command line per command, shown by its help
// (TestEveryCommandHasHelp requires one for each). They run against the
// demo data set.
var examples = map[string]string{
	"serve":                    "posgate serve --demo          # on 127.0.0.1:8080, demo data in posgate-demo.db",
	"migrate":                  "posgate migrate --database postgres://posgate@db.internal/posgate",
	"version":                  "posgate version --output json",
	"backup":                   "posgate backup --database /var/lib/posgate/posgate.db --to /var/backups/posgate-$(date +%F).db",
	"restore":                  "posgate restore --from /var/backups/posgate-2026-11-29.db --database /var/lib/posgate/posgate.db --force",
	"demo load":                "posgate demo load             # into posgate-demo.db, adding only what is absent",
	"demo reset":               "posgate demo reset            # posgate-demo.db back to the demo data set",
	"sandbox clock":            "posgate sandbox clock advance 24h --server http://127.0.0.1:8080",
	"conformance grade":        "posgate conformance grade demo-pos --html report.html --json report.json",
	"conformance forget":       "posgate conformance forget demo-pos",
	"conformance run":          "posgate conformance run --base-url http://localhost:8080 --client-id demo-pos --client-secret demo-pos-secret",
	"audit list":               "posgate audit list --company demo-company --action company.update",
	"pos-system create":        "posgate pos-system create pax --name 'PAX (test)'",
	"pos-system list":          "posgate pos-system list --output json",
	"company create":           "posgate company create acme --pos clover --name 'Acme Coffee' --time-zone America/New_York --features coupons,transactions",
	"company list":             "posgate company list --pos clover",
	"company update":           "posgate company update demo-company --pos clover --disable carousel",
	"location create":          "posgate location create LOC789 --pos clover --company demo-company --name 'Demo Store Mall'",
	"location list":            "posgate location list --pos clover --company demo-company",
	"location update":          "posgate location update LOC456 --pos clover --time-zone Europe/Berlin",
	"location disable":         "posgate location disable LOC456 --pos clover",
	"location enable":          "posgate location enable LOC456 --pos clover",
	"terminal register":        "posgate terminal register TERM-08 --pos clover --location LOC456",
	"terminal list":            "posgate terminal list --pos clover --location LOC123",
	"terminal disable":         "posgate terminal disable TERM-06 --pos clover --location LOC123",
	"terminal enable":          "posgate terminal enable TERM-99 --pos clover --location LOC123",
	"terminal watch":           "posgate terminal watch TERM-05 --pos clover --location LOC123 --count 1",
	"client bootstrap":         "posgate client bootstrap --id ops --database postgres://posgate@db.internal/posgate",
	"login":                    "posgate login --server https://posgate.example.com --client-id ops --client-secret \"$SECRET\"",
	"client create":            "posgate client create --pos clover --scopes pos_integration --id my-till",
	"client list":              "posgate client list --output json",
	"client disable":           "posgate client disable demo-pos",
	"client enable":            "posgate client enable demo-pos",
	"client rate-limit":        "posgate client rate-limit demo-pos --rps 20",
	"keys rotate":              "posgate keys rotate --server http://localhost:8080",
	"keys list":                "posgate keys list --output json",
	"keys rotate-kek":          "posgate keys rotate-kek --database posgate.db --key-encryption-key-file new.kek --previous-key-encryption-key-file old.kek",
	"webhook add":              "posgate webhook add " + demoFlags + " --url https://hooks.example.com/posgate --events transaction.recorded,loyalty.balance_changed",
	"webhook list":             "posgate webhook list " + demoFlags,
	"webhook update":           "posgate webhook update wh_0123456789abcdef " + demoFlags + " --disable",
	"webhook remove":           "posgate webhook remove wh_0123456789abcdef " + demoFlags,
	"webhook rotate-secret":    "posgate webhook rotate-secret wh_0123456789abcdef " + demoFlags,
	"webhook deliveries":       "posgate webhook deliveries wh_0123456789abcdef " + demoFlags + " --status Dead",
	"webhook redeliver":        "posgate webhook redeliver wh_0123456789abcdef " + demoFlags,
	"webhook test":             "posgate webhook test wh_0123456789abcdef " + demoFlags,
	"client redirect-uris":     "posgate client redirect-uris swagger-ui --uris http://localhost:8080/swagger/oauth2-redirect.html,https://posgate.example.com/swagger/oauth2-redirect.html",
	"user create":              "posgate user create jane@example.com --role location-manager --pos clover --locations LOC456 --name 'Jane Doe' --password-file jane-password.txt",
	"user list":                "posgate user list --output json",
	"user disable":             "posgate user disable manager@demo.posgate",
	"user enable":              "posgate user enable manager@demo.posgate",
	"client rotate-secret":     "posgate client rotate-secret demo-pos",
	"coupon issue":             "posgate coupon issue WELCOME5 " + demoFlags + " --user john-doe --name '$5 off' --until 2099-12-31T23:59:59Z",
	"coupon import":            "posgate coupon import coupons.csv " + demoFlags + "   # header: code,name,userId,…",
	"coupon show":              "posgate coupon show 10OFFmq8kl8 " + demoFlags,
	"coupon offline-conflicts": "posgate coupon offline-conflicts " + demoFlags,
	"coupon redeem":            "posgate coupon redeem 10offmq8kl8 " + demoFlags,
	"coupon cancel":            "posgate coupon cancel 10OFFmq8kl8 " + demoFlags,
	"loyalty-user create":      "posgate loyalty-user create " + demoFlags + " --id ann --first-name Ann --email ann@example.com",
	"loyalty-user update":      "posgate loyalty-user update john-doe " + demoFlags + " --phone '+1 555 0100'",
	"loyalty-user adjust":      "posgate loyalty-user adjust john-doe " + demoFlags + " --points 50 --stamps -1",
	"loyalty-user show":        "posgate loyalty-user show john-doe " + demoFlags,
	"loyalty-program show":     "posgate loyalty-program show " + demoFlags,
	"loyalty-program set":      "posgate loyalty-program set " + demoFlags + " --points-per-unit 2 --auto-enroll",
	"transaction list":         "posgate transaction list " + demoFlags + " --day 2026-11-25",
	"transaction show":         "posgate transaction show CHK-1001 " + demoFlags,
	"transaction refund":       "posgate transaction refund CHK-1001 " + demoFlags + " --id CHK-1001-R1 --amount 12.50",
	"generate coupons":         "posgate generate coupons " + demoFlags + " --database posgate-demo.db --users 1000 --coupons 1000",
	"import promotions":        "posgate import promotions promotions.csv --company demo-company --client-id demo-pos --client-secret demo-pos-secret",
	"promotions list":          "posgate promotions list " + demoFlags + " --location LOC123",
	"catalogue set":            "posgate catalogue set " + demoFlags + " --categories drinks,food --products latte,bagel",
	"catalogue show":           "posgate catalogue show " + demoFlags,
	"import products":          "posgate import products products.csv --company demo-company --client-id demo-pos --client-secret demo-pos-secret",
	"import productCategories": "posgate import productCategories categories.json --company demo-company --client-id demo-pos --client-secret demo-pos-secret",
	"products list":            "posgate products list " + demoFlags + " --output json",
	"categories list":          "posgate categories list " + demoFlags,
	"slide add":                "posgate slide add " + demoFlags + " --image https://example.com/s.png --title 'Autumn menu' --duration 8",
	"slide list":               "posgate slide list " + demoFlags,
	"slide update":             "posgate slide update slide-1 " + demoFlags + " --duration 12",
	"slide remove":             "posgate slide remove slide-1 " + demoFlags,
	"carousel template":        "posgate carousel template " + demoFlags + " --set 'https://ads.example.com/{posLocationId}/{terminalId}'",
	"receipt-promotion set":    "posgate receipt-promotion set --pos clover --location LOC123 --primary 'Rate us' --target https://example.com/rate",
	"receipt-promotion list":   "posgate receipt-promotion list " + demoFlags,
	"receipt-promotion remove": "posgate receipt-promotion remove --pos clover --location LOC123",
	"impressions":              "posgate impressions " + demoFlags + " --from 2026-11-01 --to 2026-11-30",
}

// usageError is a mistake in how posgate was called (an unknown command or
// flag, a missing argument): posgate exits 2 for it, 1 for any other error.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef is a usageError with a formatted message.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCode is posgate's exit status for err: 0 for none or a help request,
// 2 for a usage mistake, 1 for anything else.
func exitCode(err error) int {
	var u usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// groups are the first words of the two-word commands, in order.
func groups(cmds []command) []string {
	var out []string
	for _, c := range cmds {
		if g, _, ok := strings.Cut(c.name, " "); ok && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// topUsage is the short overview: the one-word commands and the groups
// with their subcommands, one line each.
func (env *cli) topUsage(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "usage: posgate COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range cmds {
		if !strings.Contains(c.name, " ") {
			fmt.Fprintf(w, "  %-18s %s\n", c.name, description(c.summary))
		}
	}
	for _, g := range groups(cmds) {
		var subs []string
		for _, c := range cmds {
			if s, ok := strings.CutPrefix(c.name, g+" "); ok {
				subs = append(subs, s)
			}
		}
		fmt.Fprintf(w, "  %-18s %s\n", g, strings.Join(subs, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Operator commands talk to a running posgate (--server, default "+defaultServer+"; credentials from")
	fmt.Fprintln(w, "--client-id/--client-secret or 'posgate login'); serve, migrate, demo, generate and client bootstrap use --database.")
	fmt.Fprintln(w, "Every flag can also be set as POSGATE_<FLAG> (e.g. POSGATE_SERVER); --output json prints data for programs.")
	fmt.Fprintln(w, "Run 'posgate help COMMAND' (or 'posgate COMMAND --help') for a command's flags and an example.")
}

// groupUsage lists a group's commands with their summaries.
func groupUsage(w io.Writer, cmds []command, group string) {
	fmt.Fprintf(w, "usage: posgate %s SUBCOMMAND [flags]\n\n", group)
	for _, c := range cmds {
		if s, ok := strings.CutPrefix(c.name, group+" "); ok {
			fmt.Fprintf(w, "  %-14s %s\n", s, description(c.summary))
		}
	}
	fmt.Fprintf(w, "\nRun 'posgate help %s SUBCOMMAND' for its flags and an example.\n", group)
}

// description is a summary's words before its synopsis ("list
// companies: --pos P" → "list companies").
func description(summary string) string {
	d, _, _ := strings.Cut(summary, ": ")
	return d
}

// commandHelp prints a command's own help: its synopsis, what it does, an
// example and its flags.
func commandHelp(w io.Writer, fs *flag.FlagSet, name string) {
	summary := name
	if c, ok := findCommand(commands(), name); ok {
		summary = c.summary
	}
	d, synopsis, ok := strings.Cut(summary, ": ")
	if !ok {
		synopsis = "[flags]"
	}
	fmt.Fprintf(w, "usage: posgate %s %s\n\n%s\n", name, synopsis, strings.ToUpper(d[:1])+d[1:]+".")
	if ex := examples[name]; ex != "" {
		fmt.Fprintf(w, "\nExample:\n  %s\n", ex)
	}
	if fs.Lookup("server") != nil && fs.Lookup("database") == nil && name != "login" {
		fmt.Fprintln(w, "\nTalks to a running posgate through its operator API: --server (default "+defaultServer+"), with\n"+
			"--client-id/--client-secret, else the login saved by 'posgate login', else, on a loopback\n"+
			"server, the demo's operator client. Errors name the server.")
	} else if fs.Lookup("database") != nil {
		fmt.Fprintln(w, "\nActs on the store named by --database itself, not through a server. Errors name the database.")
	}
	fmt.Fprintln(w, "\nFlags (each also POSGATE_<FLAG>):")
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	// The flag package writes "  -pos string"; posgate's flags are written
	// --pos everywhere else (either form is accepted).
	io.WriteString(w, flagLine.ReplaceAllString(b.String(), "  --"))
}

// flagLine is the start of a flag's line in the flag package's defaults.
var flagLine = regexp.MustCompile(`(?m)^  -`)

// findCommand returns the command named name.
func findCommand(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// typed is what the user typed as a command: the leading words before the
// first flag, at most two.
func typed(args []string) string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || len(words) == 2 {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// unknownCommand is the error for args that name no command: it says so
// first, then suggests the nearest command name, then where the list is.
func unknownCommand(cmds []command, args []string) error {
	what := typed(args)
	if what == "" {
		return usagef("unknown command %q\nRun 'posgate help' for the list of commands.", strings.Join(args, " "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command %q", what)
	if s := suggest(cmds, what); s != "" {
		fmt.Fprintf(&b, "\ndid you mean %s?", s)
	}
	first, _, _ := strings.Cut(what, " ")
	if slices.Contains(groups(cmds), first) {
		fmt.Fprintf(&b, "\nRun 'posgate help %s' for its subcommands.", first)
	} else {
		b.WriteString("\nRun 'posgate help' for the list of commands.")
	}
	return usageError{errors.New(b.String())}
}

// suggest returns the command name nearest to what by edit distance, or ""
// when none is near: every full command name ("company list") is a
// candidate, and the groups ("company") when what is one word; a two-word
// candidate is compared with what, a one-word one with what's first word.
func suggest(cmds []command, what string) string {
	first, _, _ := strings.Cut(what, " ")
	var candidates []string
	for _, c := range cmds {
		candidates = append(candidates, c.name)
	}
	if !strings.Contains(what, " ") {
		candidates = append(candidates, groups(cmds)...)
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		in := what
		if !strings.Contains(c, " ") {
			in = first
		}
		if d := editDistance(in, c); d < bestD {
			best, bestD = c, d
		}
	}
	// Near: at most a third of the name's letters wrong, and at least 1.
	if bestD == 0 || bestD > max(1, len(best)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (command names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// jsonOutput reports whether the command was asked for --output json.
func (env *cli) jsonOutput() bool { return env.output != nil && *env.output == "json" }

// emit prints v: as indented JSON under --output json, else as human
// writes it.
func (env *cli) emit(v any, human func(w io.Writer)) error {
	if env.jsonOutput() {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	human(env.stdout)
	return nil
}

// stderrIsTerminal reports whether posgate's standard error is a terminal,
// where progress bars belong; in a pipe or a log file they would be noise.
func stderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// say prints a command's result: under --output json the object v (the
// operator API's shape of it), else the sentence format makes of args.
func (env *cli) say(v any, format string, args ...any) error {
	return env.emit(v, func(w io.Writer) { fmt.Fprintf(w, format, args...) })
}

// human prints text only for people (table output): a prefix such as
// "created " before a printed object.
func (env *cli) human(text string) {
	if !env.jsonOutput() {
		io.WriteString(env.stdout, text)
	}
}

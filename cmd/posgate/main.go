// Command posgate is the posgate service (`posgate serve`) and its operator
// commands. The operator commands are clients of a running posgate's
// operator API (--server); only serve, migrate, backup and restore, demo
// load and reset, client bootstrap, keys rotate-kek and generate act on the
// store named by --database.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
)

// command is one subcommand; group commands ("terminal register") are
// looked up by their first two words.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cli, args []string) error
}

// cli carries what every command needs, so that tests can run commands with
// their own output and environment.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// terminal is whether stderr is a terminal: progress is drawn only
	// there.
	terminal bool
	// output is the running command's --output flag (nil before its flags
	// are defined).
	output *string
}

func commands() []command {
	return append([]command{
		{"serve", "serve the POS API, the operator API and the identity provider", cmdServe},
		{"migrate", "bring the store's schema up to date and exit", cmdMigrate},
		{"backup", "copy a SQLite store to a new file while posgate serves from it: --to FILE [--database D]", cmdBackup},
		{"restore", "make a SQLite store a copy of a backup (stop its servers first): --from FILE [--database D] [--force]", cmdRestore},
		{"version", "print the build (module version, VCS revision and whether the checkout was modified, Go version); also --version", cmdVersion},
		{"demo load", "load the fixed demo data set into the store (objects that exist are left as they are)", cmdDemoLoad},
		{"demo reset", "make the store hold exactly the demo data set again: everything else is deleted", cmdDemoReset},
		{"sandbox clock", "show, set or advance a demo server's sandbox clock: [set TIME | advance DURATION] [--server U]", cmdSandboxClock},
		{"conformance grade", "grade the calls a demo server recorded of a POS client against the interface's rules; fails when one fails: CLIENT-ID [--html FILE] [--json FILE] [--server U]", cmdConformanceGrade},
		{"conformance forget", "drop what a demo server recorded of a POS client, to record its next session alone: CLIENT-ID [--server U]", cmdConformanceForget},
		{"conformance run", "check a server against the interface's rules, black-box; fails when a check fails: --base-url URL --client-id I --client-secret S", cmdConformanceRun},
		{"pos-system create", "create a POS system: ID [--name N]", cmdPOSSystemCreate},
		{"pos-system list", "list POS systems", cmdPOSSystemList},
		{"company create", "create a company: ID --pos P [--name N] [--time-zone Z] [--features all|none|f1,f2] [--disabled]", cmdCompanyCreate},
		{"company list", "list companies: --pos P", cmdCompanyList},
		{"company update", "update a company: ID --pos P [--name N] [--status Active|Disabled] [--time-zone Z] [--enable f1,f2] [--disable f3]", cmdCompanyUpdate},
		{"location create", "create a location: ID --pos P --company C [--name N] [--time-zone Z] [--disabled]", cmdLocationCreate},
		{"location list", "list locations: --pos P [--company C]", cmdLocationList},
		{"location update", "update a location: ID --pos P [--name N] [--status Active|Disabled] [--time-zone Z]", cmdLocationUpdate},
		{"location disable", "disable a location: ID --pos P", cmdLocationStatus(posgate.StatusDisabled)},
		{"location enable", "enable a location: ID --pos P", cmdLocationStatus(posgate.StatusActive)},
		{"terminal register", "register a terminal: ID --pos P --location L [--name N]", cmdTerminalRegister},
		{"terminal list", "list terminals: --pos P [--location L]", cmdTerminalList},
		{"terminal disable", "disable a terminal: ID --pos P --location L", cmdTerminalStatus(posgate.StatusDisabled)},
		{"terminal enable", "enable a terminal: ID --pos P --location L", cmdTerminalStatus(posgate.StatusActive)},
		{"terminal watch", "print the events of a terminal's channel as they come (SettingsChanged, CouponIssued, TerminalDisabled), reconnecting: ID --pos P --location L [--last-event-id N] [--count N] [--client-id I --client-secret S]", cmdTerminalWatch},
		{"client bootstrap", "create an operator client (scope admin) directly in the database, for a new installation, and print its secret once: [--id ID] [--name N] [--database D]", cmdClientBootstrap},
		{"login", "check operator credentials against a server and save them for later commands: --server URL --client-id I --client-secret S", cmdLogin},
		{"client create", "create an API client and print its secret once: --scopes s1,s2 [--pos P] [--id ID] [--name N] [--companies c1,c2]", cmdClientCreate},
		{"client list", "list API clients", cmdClientList},
		{"client rotate-secret", "give an API client a new secret and print it once (the old one stops working): ID", cmdClientRotateSecret},
		{"client disable", "disable an API client: ID", cmdClientDisabled(true)},
		{"client enable", "enable an API client: ID", cmdClientDisabled(false)},
		{"client rate-limit", "set an API client's own rate limit: ID --rps N [--burst N], or ID --default", cmdClientRateLimit},
		{"keys rotate", "add a new token signing key; older keys stay published until their tokens expire", cmdKeysRotate},
		{"keys list", "list token signing keys", cmdKeysList},
		{"keys rotate-kek", "seal every stored signing key with the current key-encryption key (plain ones and those of the previous key): --key-encryption-key-file F [--previous-key-encryption-key-file F] [--database D]", cmdKeysRotateKEK},
		// Coupons and loyalty users (coupons.go).
		{"coupon issue", "issue a coupon: CODE --pos P --company C [--provider] [--name] [--title] [--picture-url] [--until T] [--status] [--user U] [--email] [--phone] [--locations L1,L2] [--info JSON]", cmdCouponIssue},
		{"coupon import", "issue the coupons of a CSV or JSON file, all or none: FILE --pos P --company C [--format csv|json]", cmdCouponImport},
		{"coupon show", "show a coupon: CODE --pos P --company C", cmdCouponShow},
		{"coupon redeem", "mark an Issued coupon Redeemed: CODE --pos P --company C", cmdCouponChange(posgate.CouponRedeemed)},
		{"coupon cancel", "cancel an Issued coupon: CODE --pos P --company C", cmdCouponChange(posgate.CouponCancelled)},
		{"coupon offline-conflicts", "list the coupons replayed offline sales honoured though they could not be redeemed any more, newest first: --pos P --company C [--page N] [--page-size N]", cmdCouponOfflineConflicts},
		{"loyalty-user create", "create a loyalty user: --pos P --company C [--id ID] [--first-name] [--last-name] [--gender] [--phone] [--email] [--stamps N] [--points N]", cmdLoyaltyUserCreate},
		{"loyalty-user update", "change a loyalty user: ID --pos P --company C [--first-name] [--last-name] [--gender] [--phone] [--email]", cmdLoyaltyUserUpdate},
		{"loyalty-user adjust", "add or take stamps and points: ID --pos P --company C [--stamps N] [--points N]", cmdLoyaltyUserAdjust},
		{"loyalty-user show", "show a loyalty user: ID --pos P --company C", cmdLoyaltyUserShow},
		{"loyalty-program show", "show a company's loyalty program: --pos P --company C", cmdLoyaltyProgramShow},
		{"loyalty-program set", "set a company's loyalty program: --pos P --company C [--points-per-unit N] [--stamps-per-sale N] [--minimum-for-stamp N] [--auto-enroll]", cmdLoyaltyProgramSet},
		{"transaction list", "list a company's transactions, newest first: --pos P --company C [--location L] [--user U] [--day YYYY-MM-DD] [--page N] [--page-size N]", cmdTransactionList},
		{"transaction show", "show a transaction: TRANSACTION-ID --pos P --company C", cmdTransactionShow},
		{"transaction refund", "refund (part of) a sale: TRANSACTION-ID --pos P --company C --id REFUND-ID [--amount N]", cmdTransactionRefund},
		{"generate coupons", "load generated loyalty users and coupons into a company, for tests and benchmarks: --pos P --company C [--users N] [--coupons N] [--seed S]", cmdGenerateCoupons},
		{"import promotions", "send a JSON or CSV file of promotions to a running posgate's API: FILE --company C [--server U] --client-id I --client-secret S", cmdImportPromotions},
		{"promotions list", "list a company's promotions: --pos P --company C [--location L] [--valid-at T]", cmdPromotionsList},
		{"catalogue set", "make a company's categories and products exactly these ids (kept ones keep their fields): --pos P --company C [--categories a,b] [--products x,y] [--file F]", cmdCatalogueSet},
		{"catalogue show", "show the ids of a company's categories and products: --pos P --company C", cmdCatalogueShow},
		{"import products", "send a JSON or CSV file of products to a running posgate's API: FILE --company C [--server U] --client-id I --client-secret S", cmdImportProducts},
		{"import productCategories", "send a JSON or CSV file of product categories to a running posgate's API: FILE --company C [--server U] --client-id I --client-secret S", cmdImportCategories},
		{"products list", "list a company's products: --pos P --company C", cmdProductsList},
		{"categories list", "list a company's product categories: --pos P --company C", cmdCategoriesList},
		{"audit list", "list the audit log of operator writes, newest first: [--actor A] [--action A] [--target-type T] [--target-id I] [--pos P] [--company C] [--location L] [--from T] [--to T] [--limit N] [--cursor C]", cmdAuditList},
	}, append(append(contentCommands(), peopleCommands()...), webhookCommands()...)...)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cli{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, terminal: stderrIsTerminal()}
	err := env.run(ctx, os.Args[1:])
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "posgate:", describe(err))
	}
	os.Exit(exitCode(err))
}

// run finds the command named by args and runs it. help, -h and --help
// (alone, or before a command's name) print help and return flag.ErrHelp;
// an unknown command is a usageError that suggests the nearest name.
func (env *cli) run(ctx context.Context, args []string) error {
	cmds := commands()
	if len(args) == 0 {
		env.topUsage(env.stderr, cmds)
		return usagef("no command given")
	}
	if args[0] == "--version" || args[0] == "-version" {
		return cmdVersion(ctx, env, args[1:])
	}
	if isHelp(args[0]) {
		if len(args) == 1 {
			env.topUsage(env.stdout, cmds)
			return flag.ErrHelp
		}
		// posgate help COMMAND: the command's own help.
		if len(args) > 3 || (len(args) == 3 && isHelp(args[2])) {
			return unknownCommand(cmds, args[1:])
		}
		return env.run(ctx, append(append([]string{}, args[1:]...), "--help"))
	}
	for _, c := range cmds {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c.run(ctx, env, args[len(words):])
		}
	}
	if slices.Contains(groups(cmds), args[0]) && (len(args) == 1 || isHelp(args[1])) {
		if len(args) == 1 {
			groupUsage(env.stderr, cmds, args[0])
			return usagef("%s needs a subcommand", args[0])
		}
		groupUsage(env.stdout, cmds, args[0])
		return flag.ErrHelp
	}
	return unknownCommand(cmds, args)
}

// describe renders an error for a terminal: validation errors list their
// fields (in natural order: line 9 before line 10), so a bad flag or a bad
// line says which one.
func describe(err error) string {
	var db *databaseError
	if errors.As(err, &db) {
		return db.describe()
	}
	var srv *serverError
	if errors.As(err, &srv) {
		return srv.describe()
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return describeAPI(ce)
	}
	var e *posgate.Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	if len(e.Fields) == 0 {
		return e.Message
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, naturalCompare)
	var b strings.Builder
	b.WriteString(e.Message)
	for _, k := range keys {
		for _, m := range e.Fields[k] {
			fmt.Fprintf(&b, "\n  %s: %s", k, m)
		}
	}
	return b.String()
}

// naturalCompare orders strings with their digit runs compared as
// numbers: "line 9" before "line 10", "items[2]" before "items[10]".
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := leadingDigits(a), leadingDigits(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// databaseError names the database a command used, so that "company
// demo-company not found" says where posgate looked.
type databaseError struct {
	database string // redacted
	err      error
}

func (e *databaseError) Error() string { return e.err.Error() + " (database " + e.database + ")" }
func (e *databaseError) Unwrap() error { return e.err }

// describe ends the message with the database (on a line of its own
// after a list of fields), and points a not-found on the default database
// at the demo's when that is what lies beside it.
func (e *databaseError) describe() string {
	out := describe(e.err)
	if strings.Contains(out, "\n") {
		out += "\n(database " + e.database + ")"
	} else {
		out += " (database " + e.database + ")"
	}
	if posgate.ErrorCode(e.err) == posgate.ENOTFOUND && e.database == defaultDatabase {
		if _, err := os.Stat(demoDatabase); err == nil {
			out += "\n(the demo's data is in " + demoDatabase + ": add --database " + demoDatabase + ")"
		}
	}
	return out
}

// inDatabase wraps err, if any, with the database it came from.
func inDatabase(dsn string, err error) error {
	var already *databaseError
	if err == nil || errors.As(err, &already) {
		return err
	}
	return &databaseError{database: redact(dsn), err: err}
}

// newFlags returns a flag set whose flags also read POSGATE_* variables
// (applied in parse, so the command line wins). Every command but serve
// takes --output. The flag package prints nothing itself: parse prints
// the command's help for -h/--help and turns a flag mistake into a
// one-line usageError.
func (env *cli) newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("posgate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	env.output = nil
	if name != "serve" {
		env.output = fs.String("output", "table", "table (for people) or json (for programs)")
	}
	return fs
}

// parseArgs parses a command's flags (env.parse) and checks that it got
// want positional arguments (any number when want is negative: the command
// checks them itself), which it returns.
func (env *cli) parseArgs(fs *flag.FlagSet, name string, args []string, want int) ([]string, error) {
	pos, err := env.parse(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != want && want >= 0 {
		return nil, usagef("%s takes %d argument(s), got %d (see 'posgate %s --help')", name, want, len(pos), name)
	}
	return pos, nil
}

// envName is the environment variable of a flag: --auth-url → POSGATE_AUTH_URL.
func envName(flagName string) string {
	return "POSGATE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse applies POSGATE_* variables, then the command line, and returns the
// positional arguments. Flags may come after positional arguments
// ("terminal register TERM-05 --pos clover").
func (env *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v := env.getenv(envName(f.Name)); v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var pos []string
	name := strings.TrimPrefix(fs.Name(), "posgate ")
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			commandHelp(env.stdout, fs, name)
			return nil, err
		} else if err != nil {
			return nil, usagef("%s (see 'posgate %s --help')", doubleDash(err.Error()), name)
		}
		if env.output != nil && *env.output != "table" && *env.output != "json" {
			return nil, usagef("--output must be table or json, not %q", *env.output)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, missingFlags(fs, name)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// missingFlags refuses, before anything is sent or opened, a command whose
// flags marked "(required" in their usage are empty, naming each of them.
func missingFlags(fs *flag.FlagSet, name string) error {
	var missing []string
	fs.VisitAll(func(f *flag.Flag) {
		what, rest, found := strings.Cut(f.Usage, " (required")
		if found && (strings.HasPrefix(rest, ")") || strings.HasPrefix(rest, ";")) && f.Value.String() == "" {
			missing = append(missing, "--"+f.Name+" ("+what+")")
		}
	})
	if len(missing) == 0 {
		return nil
	}
	return usagef("%s needs %s (see 'posgate %s --help')", name, strings.Join(missing, " and "), name)
}

// flagInMessage is a flag as the flag package names it in its errors
// ("-pos"), after a space.
var flagInMessage = regexp.MustCompile(`(^|\s)-([a-zA-Z][a-zA-Z0-9-]*)`)

// doubleDash writes the flags the flag package names in a message with two
// dashes, as the help and the documents do: "flag needs an argument: --pos".
func doubleDash(msg string) string { return flagInMessage.ReplaceAllString(msg, "$1--$2") }

// isSet reports whether a flag was given on the command line or in the
// environment.
func (env *cli) isSet(fs *flag.FlagSet, name string) bool {
	set := env.getenv(envName(name)) != ""
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

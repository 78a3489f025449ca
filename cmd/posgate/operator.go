package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/auth"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/service"
)

// storeFlags adds --database to a command's flags.
type storeFlags struct{ database *string }

func addStoreFlags(fs *flag.FlagSet) storeFlags {
	return storeFlags{database: fs.String("database", defaultDatabase, "store: a SQLite file path or file: URI, or a postgres:// URL")}
}

func (f storeFlags) open(ctx context.Context) (posgate.Store, error) {
	return app.OpenStore(ctx, *f.database, false, nil)
}

// operatorCommand parses flags (wanting exactly nargs positional arguments),
// opens the store, and runs fn with the use cases over it and the local
// operator's principal: the CLI applies the same rules and messages as the
// operator API.
func operatorCommand(ctx context.Context, env *cli, name string, args []string, nargs int, define func(fs *flag.FlagSet),
	fn func(svc *service.Service, op *posgate.Principal, pos []string) error) error {
	return storeCommand(ctx, env, name, args, nargs, define, func(st posgate.Store, pos []string) error {
		return fn(service.New(st, service.Config{Origin: cliOrigin}), posgate.LocalOperator(), pos)
	})
}

// cliOrigin is what the audit log records of the command line's writes
// (docs/api.md §22): channel "cli", and the program as the user agent.
var cliOrigin = posgate.AuditOrigin{Channel: posgate.ChannelCLI, UserAgent: "posgate-cli"}

// storeCommand is operatorCommand with the store itself, for the commands
// that are not operator use cases: serve's neighbours migrate and demo
// load, bulk test data, and key rotation (which needs its own KeyRotator).
func storeCommand(ctx context.Context, env *cli, name string, args []string, nargs int, define func(fs *flag.FlagSet),
	fn func(st posgate.Store, pos []string) error) error {
	fs := env.newFlags(name)
	sf := addStoreFlags(fs)
	if define != nil {
		define(fs)
	}
	pos, err := env.parse(fs, args)
	if err != nil {
		return err
	}
	if err := argCount(name, pos, nargs); err != nil {
		return err
	}
	st, err := sf.open(ctx)
	if err != nil {
		return inDatabase(*sf.database, err)
	}
	defer st.Close()
	return inDatabase(*sf.database, fn(st, pos))
}

func cmdMigrate(ctx context.Context, env *cli, args []string) error {
	return storeCommand(ctx, env, "migrate", args, 0, nil, func(st posgate.Store, _ []string) error {
		env.say(map[string]bool{"upToDate": true}, "schema is up to date\n")
		return nil
	})
}

func cmdDemoLoad(ctx context.Context, env *cli, args []string) error {
	return storeCommand(ctx, env, "demo load", args, 0, demoDatabaseDefault, func(st posgate.Store, _ []string) error {
		if err := demo.Load(ctx, st); err != nil {
			return err
		}
		env.say(map[string]bool{"loaded": true}, "demo data set loaded\n")
		return nil
	})
}

func cmdPOSSystemCreate(ctx context.Context, env *cli, args []string) error {
	var name *string
	return operatorCommand(ctx, env, "pos-system create", args, 1, func(fs *flag.FlagSet) {
		name = fs.String("name", "", "display name")
	}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
		p, err := svc.CreatePOSSystem(ctx, op, &service.CreatePOSSystemRequest{ID: pos[0], Name: *name})
		if err != nil {
			return err
		}
		env.say(p, "created POS system %s\n", p.ID)
		return nil
	})
}

func cmdPOSSystemList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "pos-system list", args, 0, nil, func(svc *service.Service, op *posgate.Principal, _ []string) error {
		ps, err := svc.ListPOSSystems(ctx, op)
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "NAME", "CREATED"}, ps, func(p *posgate.POSSystem) []string {
			return []string{p.ID, p.Name, stamp(p.CreatedAt)}
		})
	})
}

func cmdCompanyCreate(ctx context.Context, env *cli, args []string) error {
	var posID, name, features *string
	var disabled *bool
	return operatorCommand(ctx, env, "company create", args, 1, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		name = fs.String("name", "", "display name")
		features = fs.String("features", "all", "features switched on: all, none, or a list of "+featureList())
		disabled = fs.Bool("disabled", false, "create the company disabled")
	}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
		f, err := posgate.ParseFeatures(*features)
		if err != nil {
			return err
		}
		status := statusOf(*disabled)
		c, err := svc.CreateCompany(ctx, op, *posID, &service.CreateCompanyRequest{ID: pos[0], Name: *name, Status: &status, Features: service.FeaturesPatch(f)})
		if err != nil {
			return err
		}
		env.say(c, "created company %s/%s\n", c.POSSystemID, c.ID)
		return nil
	})
}

func cmdCompanyList(ctx context.Context, env *cli, args []string) error {
	var posID *string
	return operatorCommand(ctx, env, "company list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
	}, func(svc *service.Service, op *posgate.Principal, _ []string) error {
		cs, err := svc.ListCompanies(ctx, op, *posID)
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "NAME", "STATUS", "FEATURES"}, cs, func(c *posgate.Company) []string {
			return []string{c.ID, c.Name, string(c.Status), onFeatures(c.Features)}
		})
	})
}

func cmdCompanyUpdate(ctx context.Context, env *cli, args []string) error {
	var posID, name, status, enable, disable *string
	var fs *flag.FlagSet
	return operatorCommand(ctx, env, "company update", args, 1, func(f *flag.FlagSet) {
		fs = f
		posID = f.String("pos", "", "POS system id (required)")
		name = f.String("name", "", "new display name")
		status = f.String("status", "", "Active or Disabled")
		enable = f.String("enable", "", "features to switch on: "+featureList())
		disable = f.String("disable", "", "features to switch off")
	}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
		var upd service.UpdateCompanyRequest
		if env.isSet(fs, "name") {
			upd.Name = name
		}
		if *status != "" {
			s := posgate.Status(*status)
			upd.Status = &s
		}
		var err error
		if upd.Features, err = featurePatch(*enable, *disable); err != nil {
			return err
		}
		c, err := svc.UpdateCompany(ctx, op, *posID, pos[0], &upd)
		if err != nil {
			return err
		}
		env.say(c, "updated company %s/%s: %s, features %s\n", c.POSSystemID, c.ID, c.Status, onFeatures(c.Features))
		return nil
	})
}

// featurePatch turns --enable/--disable lists into a patch (nil when both
// are empty).
func featurePatch(enable, disable string) (*service.FeaturePatch, error) {
	if enable == "" && disable == "" {
		return nil, nil
	}
	var p service.FeaturePatch
	for _, set := range []struct {
		list string
		on   bool
	}{{enable, true}, {disable, false}} {
		if set.list == "" {
			continue
		}
		for _, name := range strings.Split(set.list, ",") {
			if err := p.Set(posgate.Feature(strings.TrimSpace(name)), set.on); err != nil {
				return nil, err
			}
		}
	}
	return &p, nil
}

func cmdLocationCreate(ctx context.Context, env *cli, args []string) error {
	var posID, company, name *string
	var disabled *bool
	return operatorCommand(ctx, env, "location create", args, 1, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
		name = fs.String("name", "", "display name")
		disabled = fs.Bool("disabled", false, "create the location disabled")
	}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
		status := statusOf(*disabled)
		l, err := svc.CreateLocation(ctx, op, *posID, &service.CreateLocationRequest{ID: pos[0], CompanyID: *company, Name: *name, Status: &status})
		if err != nil {
			return err
		}
		env.say(l, "created location %s/%s of company %s\n", l.POSSystemID, l.ID, l.CompanyID)
		return nil
	})
}

func cmdLocationList(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "location list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "only this company's locations")
	}, func(svc *service.Service, op *posgate.Principal, _ []string) error {
		ls, err := svc.ListLocations(ctx, op, *posID, *company)
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "COMPANY", "NAME", "STATUS"}, ls, func(l *posgate.Location) []string {
			return []string{l.ID, l.CompanyID, l.Name, string(l.Status)}
		})
	})
}

func cmdLocationStatus(status posgate.Status) func(ctx context.Context, env *cli, args []string) error {
	return func(ctx context.Context, env *cli, args []string) error {
		var posID *string
		return operatorCommand(ctx, env, "location "+verb(status), args, 1, func(fs *flag.FlagSet) {
			posID = fs.String("pos", "", "POS system id (required)")
		}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
			l, err := svc.UpdateLocation(ctx, op, *posID, pos[0], &service.UpdateLocationRequest{Status: &status})
			if err != nil {
				return err
			}
			env.say(l, "location %s/%s is %s\n", l.POSSystemID, l.ID, l.Status)
			return nil
		})
	}
}

func cmdTerminalRegister(ctx context.Context, env *cli, args []string) error {
	var posID, location, name *string
	return operatorCommand(ctx, env, "terminal register", args, 1, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		location = fs.String("location", "", "location id (required)")
		name = fs.String("name", "", "display name")
	}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
		t, err := svc.CreateTerminal(ctx, op, *posID, *location, &service.CreateTerminalRequest{ID: pos[0], Name: *name})
		if err != nil {
			return err
		}
		env.say(t, "registered terminal %s at %s/%s (usable now)\n", t.ID, t.POSSystemID, t.LocationID)
		return nil
	})
}

func cmdTerminalList(ctx context.Context, env *cli, args []string) error {
	var posID, location *string
	return operatorCommand(ctx, env, "terminal list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		location = fs.String("location", "", "only this location's terminals")
	}, func(svc *service.Service, op *posgate.Principal, _ []string) error {
		ts, err := svc.ListTerminals(ctx, op, *posID, *location)
		if err != nil {
			return err
		}
		return table(env, []string{"LOCATION", "ID", "NAME", "STATUS"}, ts, func(t *posgate.Terminal) []string {
			return []string{t.LocationID, t.ID, t.Name, string(t.Status)}
		})
	})
}

func cmdTerminalStatus(status posgate.Status) func(ctx context.Context, env *cli, args []string) error {
	return func(ctx context.Context, env *cli, args []string) error {
		var posID, location *string
		return operatorCommand(ctx, env, "terminal "+verb(status), args, 1, func(fs *flag.FlagSet) {
			posID = fs.String("pos", "", "POS system id (required)")
			location = fs.String("location", "", "location id (required)")
		}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
			t, err := svc.SetTerminalStatus(ctx, op, *posID, *location, pos[0], status)
			if err != nil {
				return err
			}
			env.say(t, "terminal %s at %s/%s is %s\n", t.ID, t.POSSystemID, t.LocationID, t.Status)
			return nil
		})
	}
}

func cmdClientCreate(ctx context.Context, env *cli, args []string) error {
	var id, name, posID, scopes, companies *string
	return operatorCommand(ctx, env, "client create", args, 0, func(fs *flag.FlagSet) {
		id = fs.String("id", "", "client id (generated when empty)")
		name = fs.String("name", "", "display name")
		posID = fs.String("pos", "", "POS system the client is bound to (required for POS scopes)")
		scopes = fs.String("scopes", posgate.ScopePOSIntegration, "allowed scopes, comma-separated: "+strings.Join(posgate.KnownScopes, ", "))
		companies = fs.String("companies", "", "restrict the client to these companies, comma-separated")
	}, func(svc *service.Service, op *posgate.Principal, _ []string) error {
		c, err := svc.CreateClient(ctx, op, &service.CreateClientRequest{ID: *id, Name: *name, POSSystemID: *posID, Scopes: splitList(*scopes), CompanyIDs: splitList(*companies)})
		if err != nil {
			return err
		}
		env.say(c, "client_id:     %s\nclient_secret: %s\n\nThe secret is shown only now; posgate keeps only its hash.\n", c.ID, c.ClientSecret)
		return nil
	})
}

func cmdClientList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "client list", args, 0, nil, func(svc *service.Service, op *posgate.Principal, _ []string) error {
		cs, err := svc.ListClients(ctx, op)
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "POS", "SCOPES", "COMPANIES", "DISABLED"}, cs, func(c *service.ClientView) []string {
			return []string{c.ID, c.POSSystemID, strings.Join(c.Scopes, ","), strings.Join(c.CompanyIDs, ","), fmt.Sprint(c.Disabled)}
		})
	})
}

func cmdClientDisabled(disabled bool) func(ctx context.Context, env *cli, args []string) error {
	return func(ctx context.Context, env *cli, args []string) error {
		name := "client enable"
		if disabled {
			name = "client disable"
		}
		return operatorCommand(ctx, env, name, args, 1, nil, func(svc *service.Service, op *posgate.Principal, pos []string) error {
			c, err := svc.SetClientDisabled(ctx, op, pos[0], disabled)
			if err != nil {
				return err
			}
			env.say(c, "client %s disabled=%v (tokens already issued stay valid until they expire)\n", c.ID, c.Disabled)
			return nil
		})
	}
}

// cmdClientRotateSecret replaces a client's secret (a leaked one, or a
// routine change) and prints the new one once.
func cmdClientRotateSecret(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "client rotate-secret", args, 1, nil, func(svc *service.Service, op *posgate.Principal, pos []string) error {
		c, err := svc.RotateClientSecret(ctx, op, pos[0])
		if err != nil {
			return err
		}
		env.say(c, "client_id:     %s\nclient_secret: %s\n\nThe old secret no longer works; the new one is shown only now.\n", c.ID, c.ClientSecret)
		return nil
	})
}

func cmdClientRateLimit(ctx context.Context, env *cli, args []string) error {
	var rps *float64
	var burst *int
	var def *bool
	return operatorCommand(ctx, env, "client rate-limit", args, 1, func(fs *flag.FlagSet) {
		rps = fs.Float64("rps", 0, "requests per second the client may send (on each instance)")
		burst = fs.Int("burst", 0, "largest burst of requests (default: twice --rps, at least 1)")
		def = fs.Bool("default", false, "remove the client's own rate limit: the server's --rate-limit applies")
	}, func(svc *service.Service, op *posgate.Principal, pos []string) error {
		var c *service.ClientView
		var err error
		switch {
		case *def && (*rps != 0 || *burst != 0):
			return fmt.Errorf("--default takes no --rps or --burst")
		case *def:
			c, err = svc.ClearClientRateLimit(ctx, op, pos[0])
		default:
			b := *burst
			if b == 0 {
				b = max(1, int(2**rps))
			}
			c, err = svc.SetClientRateLimit(ctx, op, pos[0], &posgate.RateLimit{RequestsPerSecond: *rps, Burst: b})
		}
		if err != nil {
			return err
		}
		if c.RateLimit == nil {
			env.say(c, "client %s has the default rate limit\n", c.ID)
		} else {
			env.say(c, "client %s may send %g requests per second in bursts of up to %d (servers apply it within a second)\n",
				c.ID, c.RateLimit.RequestsPerSecond, c.RateLimit.Burst)
		}
		return nil
	})
}

func cmdKeysRotate(ctx context.Context, env *cli, args []string) error {
	var ttl *time.Duration
	return storeCommand(ctx, env, "keys rotate", args, 0, func(fs *flag.FlagSet) {
		ttl = fs.Duration("token-ttl", time.Hour, "the servers' --token-ttl: older keys are kept until their tokens have expired")
	}, func(st posgate.Store, _ []string) error {
		svc := service.New(st, service.Config{Keys: storeRotator{store: st, ttl: *ttl}, Origin: cliOrigin})
		k, err := svc.RotateKey(ctx, posgate.LocalOperator())
		if err != nil {
			return err
		}
		env.say(k, "new signing key %s; running servers sign with it after their next key refresh\n", k.Kid)
		return nil
	})
}

func cmdKeysList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "keys list", args, 0, nil, func(svc *service.Service, op *posgate.Principal, _ []string) error {
		ks, err := svc.ListKeys(ctx, op)
		if err != nil {
			return err
		}
		return table(env, []string{"KID", "ALG", "CREATED", "SIGNING"}, ks, func(k service.KeyView) []string {
			return []string{k.Kid, k.Algorithm, stamp(k.CreatedAt), fmt.Sprint(k.Signing)}
		})
	})
}

// storeRotator rotates the signing key on the store alone (auth.Rotate):
// the CLI has no identity provider running; servers pick the new key up at
// their next key refresh.
type storeRotator struct {
	store posgate.Store
	ttl   time.Duration
}

// Rotate implements service.KeyRotator.
func (r storeRotator) Rotate(ctx context.Context) (*posgate.SigningKey, error) {
	return auth.Rotate(ctx, r.store, time.Now().UTC(), r.ttl)
}

// table prints rows aligned under a header, or under --output json the
// rows themselves as a JSON array (the operator API's shapes).
func table[T any](env *cli, header []string, rows []T, cells func(T) []string) error {
	if env.jsonOutput() {
		if rows == nil {
			rows = []T{}
		}
		return env.emit(rows, nil)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(cells(r), "\t"))
	}
	return tw.Flush()
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func statusOf(disabled bool) posgate.Status {
	if disabled {
		return posgate.StatusDisabled
	}
	return posgate.StatusActive
}

func verb(s posgate.Status) string {
	if s == posgate.StatusDisabled {
		return "disable"
	}
	return "enable"
}

func featureList() string {
	names := make([]string, len(posgate.AllFeatures))
	for i, f := range posgate.AllFeatures {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

func onFeatures(f posgate.Features) string {
	var on []string
	for _, name := range posgate.AllFeatures {
		if f.Enabled(name) {
			on = append(on, string(name))
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ",")
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/app"
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

// cliOrigin is what the audit log records of the writes the command line
// makes on the store itself (client bootstrap, docs/api.md §22): channel
// "cli", and the program as the user agent.
var cliOrigin = posgate.AuditOrigin{Channel: posgate.ChannelCLI, UserAgent: "posgate-cli/" + cliVersion}

// storeCommand parses flags, opens the store named by --database and runs
// fn with it, for the few commands that act on the store itself: serve's
// neighbours migrate and demo load and reset, client bootstrap (the first
// operator client, before any can call the API) and bulk test data. Every
// error names the database.
func storeCommand(ctx context.Context, env *cli, name string, args []string, nargs int, define func(fs *flag.FlagSet),
	fn func(st posgate.Store, pos []string) error) error {
	fs := env.newFlags(name)
	sf := addStoreFlags(fs)
	if define != nil {
		define(fs)
	}
	pos, err := env.parseArgs(fs, name, args, nargs)
	if err != nil {
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
	}, func(a *client.Admin, pos []string) error {
		p, err := answer[*posgate.POSSystem](a.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: pos[0], Name: *name}))
		if err != nil {
			return err
		}
		env.say(p, "created POS system %s\n", p.ID)
		return nil
	})
}

func cmdPOSSystemList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "pos-system list", args, 0, nil, func(a *client.Admin, _ []string) error {
		ps, err := answer[[]*posgate.POSSystem](a.ListPosSystems(ctx))
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "NAME", "CREATED"}, ps, func(p *posgate.POSSystem) []string {
			return []string{p.ID, p.Name, stamp(p.CreatedAt)}
		})
	})
}

func cmdCompanyCreate(ctx context.Context, env *cli, args []string) error {
	var posID, name, features, zone *string
	var disabled *bool
	return operatorCommand(ctx, env, "company create", args, 1, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		name = fs.String("name", "", "display name")
		zone = fs.String("time-zone", "", "IANA time zone of its locations without one (e.g. America/New_York; default UTC)")
		features = fs.String("features", "all", "features switched on: all, none, or a list of "+featureList())
		disabled = fs.Bool("disabled", false, "create the company disabled")
	}, func(a *client.Admin, pos []string) error {
		f, err := posgate.ParseFeatures(*features)
		if err != nil {
			return err
		}
		status := statusOf(*disabled)
		c, err := answer[*posgate.Company](a.CreateCompany(ctx, *posID, conv[client.CreateCompanyRequest](&service.CreateCompanyRequest{ID: pos[0], Name: *name, Status: &status, Features: service.FeaturesPatch(f), TimeZone: *zone})))
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
	}, func(a *client.Admin, _ []string) error {
		cs, err := answer[[]*posgate.Company](a.ListCompanies(ctx, *posID))
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "NAME", "STATUS", "TIME ZONE", "FEATURES"}, cs, func(c *posgate.Company) []string {
			return []string{c.ID, c.Name, string(c.Status), zoneOrDash(c.TimeZone), onFeatures(c.Features)}
		})
	})
}

func cmdCompanyUpdate(ctx context.Context, env *cli, args []string) error {
	var posID, enable, disable *string
	var place placeUpdate
	return operatorCommand(ctx, env, "company update", args, 1, func(f *flag.FlagSet) {
		posID = f.String("pos", "", "POS system id (required)")
		place.define(f, `new IANA time zone ("" removes it: UTC)`)
		enable = f.String("enable", "", "features to switch on: "+featureList())
		disable = f.String("disable", "", "features to switch off")
	}, func(a *client.Admin, pos []string) error {
		var upd service.UpdateCompanyRequest
		upd.Name, upd.Status, upd.TimeZone = place.values(env)
		var err error
		if upd.Features, err = featurePatch(*enable, *disable); err != nil {
			return err
		}
		c, err := answer[*posgate.Company](a.UpdateCompany(ctx, *posID, pos[0], conv[client.UpdateCompanyRequest](&upd)))
		if err != nil {
			return err
		}
		env.say(c, "updated company %s/%s: %s, time zone %s, features %s\n", c.POSSystemID, c.ID, c.Status, zoneOrDash(c.TimeZone), onFeatures(c.Features))
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
	var posID, company, name, zone *string
	var disabled *bool
	return operatorCommand(ctx, env, "location create", args, 1, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
		name = fs.String("name", "", "display name")
		zone = fs.String("time-zone", "", "IANA time zone of its local time (e.g. Europe/Berlin; default: the company's)")
		disabled = fs.Bool("disabled", false, "create the location disabled")
	}, func(a *client.Admin, pos []string) error {
		status := statusOf(*disabled)
		l, err := answer[*posgate.Location](a.CreateLocation(ctx, *posID, conv[client.CreateLocationRequest](&service.CreateLocationRequest{ID: pos[0], CompanyID: *company, Name: *name, Status: &status, TimeZone: *zone})))
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
	}, func(a *client.Admin, _ []string) error {
		ls, err := answer[[]*posgate.Location](a.ListLocations(ctx, *posID, *company))
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "COMPANY", "NAME", "STATUS", "TIME ZONE"}, ls, func(l *posgate.Location) []string {
			return []string{l.ID, l.CompanyID, l.Name, string(l.Status), zoneOrDash(l.TimeZone)}
		})
	})
}

func cmdLocationUpdate(ctx context.Context, env *cli, args []string) error {
	var posID *string
	var place placeUpdate
	return operatorCommand(ctx, env, "location update", args, 1, func(f *flag.FlagSet) {
		posID = f.String("pos", "", "POS system id (required)")
		place.define(f, `new IANA time zone ("" removes it: the company's applies)`)
	}, func(a *client.Admin, pos []string) error {
		var upd service.UpdateLocationRequest
		upd.Name, upd.Status, upd.TimeZone = place.values(env)
		l, err := answer[*posgate.Location](a.UpdateLocation(ctx, *posID, pos[0], conv[client.UpdateLocationRequest](&upd)))
		if err != nil {
			return err
		}
		env.say(l, "updated location %s/%s: %s, time zone %s\n", l.POSSystemID, l.ID, l.Status, zoneOrDash(l.TimeZone))
		return nil
	})
}

// placeUpdate is the flags that company and location updates share:
// --name, --status and --time-zone.
type placeUpdate struct {
	fs                 *flag.FlagSet
	name, status, zone *string
}

func (p *placeUpdate) define(f *flag.FlagSet, zoneUsage string) {
	p.fs = f
	p.name = f.String("name", "", "new display name")
	p.status = f.String("status", "", "Active or Disabled")
	p.zone = f.String("time-zone", "", zoneUsage)
}

// values are the changes the flags ask for: nil for a flag not given (an
// empty --name or --time-zone is given; an empty --status is not).
func (p *placeUpdate) values(env *cli) (name *string, status *posgate.Status, zone *string) {
	if env.isSet(p.fs, "name") {
		name = p.name
	}
	if env.isSet(p.fs, "time-zone") {
		zone = p.zone
	}
	if *p.status != "" {
		s := posgate.Status(*p.status)
		status = &s
	}
	return name, status, zone
}

// zoneOrDash shows a time zone that is not set as "-".
func zoneOrDash(zone string) string {
	if zone == "" {
		return "-"
	}
	return zone
}

func cmdLocationStatus(status posgate.Status) func(ctx context.Context, env *cli, args []string) error {
	return func(ctx context.Context, env *cli, args []string) error {
		var posID *string
		return operatorCommand(ctx, env, "location "+verb(status), args, 1, func(fs *flag.FlagSet) {
			posID = fs.String("pos", "", "POS system id (required)")
		}, func(a *client.Admin, pos []string) error {
			l, err := answer[*posgate.Location](a.UpdateLocation(ctx, *posID, pos[0], conv[client.UpdateLocationRequest](&service.UpdateLocationRequest{Status: &status})))
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
	}, func(a *client.Admin, pos []string) error {
		t, err := answer[*posgate.Terminal](a.CreateTerminal(ctx, *posID, *location, conv[client.CreateTerminalRequest](&service.CreateTerminalRequest{ID: pos[0], Name: *name})))
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
	}, func(a *client.Admin, _ []string) error {
		// The API lists a location's terminals: without --location, every
		// location's in turn.
		locs := []string{*location}
		if *location == "" {
			ls, err := a.ListLocations(ctx, *posID, "")
			if err != nil {
				return err
			}
			locs = locs[:0]
			for _, l := range ls {
				locs = append(locs, l.PosLocationID)
			}
		}
		var ts []*posgate.Terminal
		for _, l := range locs {
			got, err := answer[[]*posgate.Terminal](a.ListTerminals(ctx, *posID, l))
			if err != nil {
				return err
			}
			ts = append(ts, got...)
		}
		var err error
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
		}, func(a *client.Admin, pos []string) error {
			set := a.EnableTerminal
			if status == posgate.StatusDisabled {
				set = a.DisableTerminal
			}
			t, err := answer[*posgate.Terminal](set(ctx, *posID, *location, pos[0]))
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
	}, func(a *client.Admin, _ []string) error {
		c, err := answer[*service.ClientView](a.CreateClient(ctx, conv[client.CreateAPIClientRequest](&service.CreateClientRequest{ID: *id, Name: *name, POSSystemID: *posID, Scopes: splitList(*scopes), CompanyIDs: splitList(*companies)})))
		if err != nil {
			return err
		}
		env.say(c, "client_id:     %s\nclient_secret: %s\n\nThe secret is shown only now; posgate keeps only its hash.\n", c.ID, secretOrNote(c.ClientSecret, c.SecretNote))
		return nil
	})
}

func cmdClientList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "client list", args, 0, nil, func(a *client.Admin, _ []string) error {
		cs, err := answer[[]*service.ClientView](a.ListClients(ctx))
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
		return operatorCommand(ctx, env, name, args, 1, nil, func(a *client.Admin, pos []string) error {
			set := a.EnableClient
			if disabled {
				set = a.DisableClient
			}
			c, err := answer[*service.ClientView](set(ctx, pos[0]))
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
	return operatorCommand(ctx, env, "client rotate-secret", args, 1, nil, func(a *client.Admin, pos []string) error {
		c, err := answer[*service.ClientView](a.RotateClientSecret(ctx, pos[0]))
		if err != nil {
			return err
		}
		env.say(c, "client_id:     %s\nclient_secret: %s\n\nThe old secret no longer works; the new one is shown only now.\n", c.ID, secretOrNote(c.ClientSecret, c.SecretNote))
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
	}, func(a *client.Admin, pos []string) error {
		var c *service.ClientView
		var err error
		switch {
		case *def && (*rps != 0 || *burst != 0):
			return fmt.Errorf("--default takes no --rps or --burst")
		case *def:
			c, err = answer[*service.ClientView](a.DeleteClientRateLimit(ctx, pos[0]))
		default:
			b := *burst
			if b == 0 {
				b = max(1, int(2**rps))
			}
			c, err = answer[*service.ClientView](a.PutClientRateLimit(ctx, pos[0], client.RateLimit{RequestsPerSecond: *rps, Burst: b}))
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
	return operatorCommand(ctx, env, "keys rotate", args, 0, nil, func(a *client.Admin, _ []string) error {
		k, err := answer[*service.KeyView](a.RotateSigningKey(ctx))
		if err != nil {
			return err
		}
		env.say(k, "new signing key %s; the server signs with it now, other instances after their next key refresh\n", k.Kid)
		return nil
	})
}

func cmdKeysList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "keys list", args, 0, nil, func(a *client.Admin, _ []string) error {
		ks, err := answer[[]service.KeyView](a.ListSigningKeys(ctx))
		if err != nil {
			return err
		}
		return table(env, []string{"KID", "ALG", "CREATED", "SIGNING"}, ks, func(k service.KeyView) []string {
			return []string{k.Kid, k.Algorithm, stamp(k.CreatedAt), fmt.Sprint(k.Signing)}
		})
	})
}

// cmdClientBootstrap creates an operator client on the store itself: the
// first one, which no API call can create since every call needs one. It
// is audited as the command line's (channel cli).
func cmdClientBootstrap(ctx context.Context, env *cli, args []string) error {
	var id, name *string
	return storeCommand(ctx, env, "client bootstrap", args, 0, func(fs *flag.FlagSet) {
		id = fs.String("id", "", "client id (generated when empty)")
		name = fs.String("name", "Operator", "display name")
	}, func(st posgate.Store, _ []string) error {
		svc := service.New(st, service.Config{Origin: cliOrigin})
		c, err := svc.CreateClient(ctx, posgate.LocalOperator(), &service.CreateClientRequest{ID: *id, Name: *name, Scopes: []string{posgate.ScopeAdmin}})
		if err != nil {
			return err
		}
		env.say(c, "client_id:     %s\nclient_secret: %s\n\nThe secret is shown only now; posgate keeps only its hash.\nUse it with: posgate login --server URL --client-id %s --client-secret …\n", c.ID, c.ClientSecret, c.ID)
		return nil
	})
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

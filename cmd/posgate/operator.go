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
	"github.com/posgate/posgate/internal/ops"
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
// opens the store, and runs fn with it.
func operatorCommand(ctx context.Context, env *cli, name string, args []string, nargs int, define func(fs *flag.FlagSet),
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
	if len(pos) != nargs {
		fs.Usage()
		return fmt.Errorf("%s takes %d argument(s), got %d", name, nargs, len(pos))
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st, pos)
}

func cmdMigrate(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "migrate", args, 0, nil, func(st posgate.Store, _ []string) error {
		fmt.Fprintln(env.stdout, "schema is up to date")
		return nil
	})
}

func cmdDemoLoad(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "demo load", args, 0, nil, func(st posgate.Store, _ []string) error {
		if err := demo.Load(ctx, st); err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, "demo data set loaded")
		return nil
	})
}

func cmdPOSSystemCreate(ctx context.Context, env *cli, args []string) error {
	var name *string
	return operatorCommand(ctx, env, "pos-system create", args, 1, func(fs *flag.FlagSet) {
		name = fs.String("name", "", "display name")
	}, func(st posgate.Store, pos []string) error {
		p := &posgate.POSSystem{ID: pos[0], Name: *name}
		if err := p.Validate(); err != nil {
			return err
		}
		if err := st.CreatePOSSystem(ctx, p); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "created POS system %s\n", p.ID)
		return nil
	})
}

func cmdPOSSystemList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "pos-system list", args, 0, nil, func(st posgate.Store, _ []string) error {
		ps, err := st.ListPOSSystems(ctx)
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
	}, func(st posgate.Store, pos []string) error {
		f, err := posgate.ParseFeatures(*features)
		if err != nil {
			return err
		}
		c := &posgate.Company{POSSystemID: *posID, ID: pos[0], Name: *name, Status: statusOf(*disabled), Features: f}
		if err := c.Validate(); err != nil {
			return err
		}
		if err := st.CreateCompany(ctx, c); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "created company %s/%s\n", c.POSSystemID, c.ID)
		return nil
	})
}

func cmdCompanyList(ctx context.Context, env *cli, args []string) error {
	var posID *string
	return operatorCommand(ctx, env, "company list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
	}, func(st posgate.Store, _ []string) error {
		cs, err := st.ListCompanies(ctx, *posID)
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
	}, func(st posgate.Store, pos []string) error {
		var upd struct {
			name   *string
			status *posgate.Status
		}
		if env.isSet(fs, "name") {
			upd.name = name
		}
		if *status != "" {
			s := posgate.Status(*status)
			upd.status = &s
		}
		patch, err := featurePatch(*enable, *disable)
		if err != nil {
			return err
		}
		c, err := ops.UpdateCompany(ctx, st, *posID, pos[0], upd.name, upd.status, patch)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "updated company %s/%s: %s, features %s\n", c.POSSystemID, c.ID, c.Status, onFeatures(c.Features))
		return nil
	})
}

// featurePatch turns --enable/--disable lists into a patch (nil when both
// are empty).
func featurePatch(enable, disable string) (*ops.FeaturePatch, error) {
	if enable == "" && disable == "" {
		return nil, nil
	}
	var p ops.FeaturePatch
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
	}, func(st posgate.Store, pos []string) error {
		l := &posgate.Location{POSSystemID: *posID, ID: pos[0], CompanyID: *company, Name: *name, Status: statusOf(*disabled)}
		if err := l.Validate(); err != nil {
			return err
		}
		if err := st.CreateLocation(ctx, l); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "created location %s/%s of company %s\n", l.POSSystemID, l.ID, l.CompanyID)
		return nil
	})
}

func cmdLocationList(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "location list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "only this company's locations")
	}, func(st posgate.Store, _ []string) error {
		ls, err := st.ListLocations(ctx, *posID, *company)
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
		}, func(st posgate.Store, pos []string) error {
			l, err := st.UpdateLocation(ctx, *posID, pos[0], posgate.LocationUpdate{Status: &status})
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "location %s/%s is %s\n", l.POSSystemID, l.ID, l.Status)
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
	}, func(st posgate.Store, pos []string) error {
		t := &posgate.Terminal{POSSystemID: *posID, LocationID: *location, ID: pos[0], Name: *name, Status: posgate.StatusActive}
		if err := t.Validate(); err != nil {
			return err
		}
		if err := st.CreateTerminal(ctx, t); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "registered terminal %s at %s/%s (usable now)\n", t.ID, t.POSSystemID, t.LocationID)
		return nil
	})
}

func cmdTerminalList(ctx context.Context, env *cli, args []string) error {
	var posID, location *string
	return operatorCommand(ctx, env, "terminal list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		location = fs.String("location", "", "only this location's terminals")
	}, func(st posgate.Store, _ []string) error {
		ts, err := st.ListTerminals(ctx, *posID, *location)
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
		}, func(st posgate.Store, pos []string) error {
			t, err := st.UpdateTerminal(ctx, *posID, *location, pos[0], posgate.TerminalUpdate{Status: &status})
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "terminal %s at %s/%s is %s\n", t.ID, t.POSSystemID, t.LocationID, t.Status)
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
	}, func(st posgate.Store, _ []string) error {
		c := &posgate.Client{ID: *id, Name: *name, POSSystemID: *posID, Scopes: splitList(*scopes), CompanyIDs: splitList(*companies)}
		secret, err := ops.CreateClient(ctx, st, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "client_id:     %s\nclient_secret: %s\n\nThe secret is shown only now; posgate keeps only its hash.\n", c.ID, secret)
		return nil
	})
}

func cmdClientList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "client list", args, 0, nil, func(st posgate.Store, _ []string) error {
		cs, err := st.ListClients(ctx)
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "POS", "SCOPES", "COMPANIES", "DISABLED"}, cs, func(c *posgate.Client) []string {
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
		return operatorCommand(ctx, env, name, args, 1, nil, func(st posgate.Store, pos []string) error {
			c, err := st.UpdateClient(ctx, pos[0], posgate.ClientUpdate{Disabled: &disabled})
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "client %s disabled=%v (tokens already issued stay valid until they expire)\n", c.ID, c.Disabled)
			return nil
		})
	}
}

func cmdKeysRotate(ctx context.Context, env *cli, args []string) error {
	var ttl *time.Duration
	return operatorCommand(ctx, env, "keys rotate", args, 0, func(fs *flag.FlagSet) {
		ttl = fs.Duration("token-ttl", time.Hour, "the servers' --token-ttl: older keys are kept until their tokens have expired")
	}, func(st posgate.Store, _ []string) error {
		k, err := auth.Rotate(ctx, st, time.Now().UTC(), *ttl)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "new signing key %s; running servers sign with it after their next key refresh\n", k.ID)
		return nil
	})
}

func cmdKeysList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "keys list", args, 0, nil, func(st posgate.Store, _ []string) error {
		ks, err := st.ListSigningKeys(ctx)
		if err != nil {
			return err
		}
		last := ""
		if len(ks) > 0 {
			last = ks[len(ks)-1].ID
		}
		return table(env, []string{"KID", "ALG", "CREATED", "SIGNING"}, ks, func(k *posgate.SigningKey) []string {
			return []string{k.ID, k.Algorithm, stamp(k.CreatedAt), fmt.Sprint(k.ID == last)}
		})
	})
}

// table prints rows aligned under a header.
func table[T any](env *cli, header []string, rows []T, cells func(T) []string) error {
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

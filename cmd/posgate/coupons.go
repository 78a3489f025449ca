package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/coupongen"
	"github.com/posgate/posgate/internal/importfile"
	"github.com/posgate/posgate/internal/service"
)

// progress passes seq through, printing to stderr every `every` items how
// many have gone by, so that an operator loading a large file sees it move;
// only on a terminal (a pipe or a log file gets no progress lines).
func progress[T any](env *cli, what string, every int, seq iter.Seq2[T, error]) iter.Seq2[T, error] {
	if !env.terminal {
		return seq
	}
	w := env.stderr
	return func(yield func(T, error) bool) {
		start, n := time.Now(), 0
		for item, err := range seq {
			if err == nil {
				n++
				if n%every == 0 {
					fmt.Fprintf(w, "  %d %s… (%s)\n", n, what, time.Since(start).Round(time.Millisecond))
				}
			}
			if !yield(item, err) {
				return
			}
		}
	}
}

func cmdGenerateCoupons(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	var users, coupons *int
	var seed *uint64
	return storeCommand(ctx, env, "generate coupons", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required; it must exist)")
		users = fs.Int("users", 1000, "loyalty users to generate (ids G0000000…)")
		coupons = fs.Int("coupons", 1000, "coupons to generate")
		seed = fs.Uint64("seed", 1, "seed: the same seed makes the same data")
	}, func(st posgate.Store, _ []string) error {
		if *users < 0 || *coupons < 0 {
			return fmt.Errorf("--users and --coupons must not be negative")
		}
		if _, err := st.FindCompany(ctx, *posID, *company); err != nil {
			return err
		}
		locs, err := st.ListLocations(ctx, *posID, *company)
		if err != nil {
			return err
		}
		cfg := coupongen.Config{POSSystemID: *posID, CompanyID: *company, Users: *users, Coupons: *coupons, Seed: *seed, Now: time.Now().UTC()}
		for _, l := range locs {
			cfg.LocationIDs = append(cfg.LocationIDs, l.ID)
		}
		start := time.Now()
		n, err := st.ImportLoyaltyUsers(ctx, progress(env, "loyalty users", 100_000, cfg.AllUsers()))
		if err != nil {
			return err
		}
		env.say(map[string]int{"loyaltyUsers": n}, "generated %d loyalty users in %s\n", n, time.Since(start).Round(time.Millisecond))
		start = time.Now()
		n, err = st.ImportCoupons(ctx, progress(env, "coupons", 100_000, cfg.AllCoupons()))
		if err != nil {
			return err
		}
		env.say(map[string]int{"coupons": n}, "generated %d coupons in %s\n", n, time.Since(start).Round(time.Millisecond))
		return nil
	})
}

// companyFlags are the --pos and --company flags of the coupon and
// loyalty-user commands.
type companyFlags struct{ pos, company *string }

func addCompanyFlags(fs *flag.FlagSet) companyFlags {
	return companyFlags{pos: fs.String("pos", "", "POS system id (required)"), company: fs.String("company", "", "company id (required)")}
}

// printCoupon shows a coupon with the status the POS endpoints report.
func printCoupon(env *cli, c *service.CouponView) {
	if env.jsonOutput() {
		env.emit(c, nil)
		return
	}
	opt := func(s *string) string {
		if s == nil {
			return "-"
		}
		return *s
	}
	until := "-"
	if c.AvailableUntil != nil {
		until = stamp(*c.AvailableUntil)
	}
	locs := "every location"
	if len(c.LocationIDs) > 0 {
		locs = strings.Join(c.LocationIDs, ",")
	}
	info := "-"
	if c.Info != nil {
		b, _ := json.Marshal(c.Info)
		info = string(b)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"code", c.Code}, {"company", c.POSSystemID + "/" + c.CompanyID}, {"status", string(c.Status)},
		{"rewardProvider", string(c.RewardProvider)}, {"name", opt(c.Name)}, {"title", opt(c.Title)}, {"pictureUrl", opt(c.PictureURL)},
		{"availableUntil", until}, {"info", info}, {"userId", orDash(c.UserID)}, {"email", orDash(c.Email)}, {"phone", orDash(c.Phone)},
		{"locations", locs}, {"created", stamp(c.CreatedAt)}, {"updated", stamp(c.UpdatedAt)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cmdCouponIssue(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var provider, name, title, picture, until, status, user, email, phone, locations, info *string
	var fs *flag.FlagSet
	return operatorCommand(ctx, env, "coupon issue", args, 1, func(f *flag.FlagSet) {
		fs, cf = f, addCompanyFlags(f)
		provider = f.String("provider", string(posgate.ProviderTwoReward), "reward provider: TwoReward, PJM or Dummy")
		name = f.String("name", "", "name")
		title = f.String("title", "", "title")
		picture = f.String("picture-url", "", "picture URL (http or https)")
		until = f.String("until", "", "end of availability, RFC 3339 (e.g. 2026-12-31T23:59:59Z); none when empty")
		status = f.String("status", string(posgate.CouponIssued), "Issued, Redeemed or Cancelled")
		user = f.String("user", "", "id of the loyalty user who owns the coupon")
		email = f.String("email", "", "owner e-mail of the coupon's own")
		phone = f.String("phone", "", "owner phone of the coupon's own")
		locations = f.String("locations", "", "locations where it is usable, comma-separated (every location when empty)")
		info = f.String("info", "", `info sections as JSON, e.g. '[{"title":"Terms","items":{"minimumSpend":"20.00"}}]'`)
	}, func(a *client.Admin, pos []string) error {
		in := &service.CouponInput{Code: pos[0], RewardProvider: posgate.RewardProvider(*provider), Status: posgate.CouponStatus(*status),
			UserID: *user, Email: *email, Phone: *phone, LocationIDs: splitList(*locations)}
		for _, o := range []struct {
			flag string
			dst  **string
			v    *string
		}{{"name", &in.Name, name}, {"title", &in.Title, title}, {"picture-url", &in.PictureURL, picture}} {
			if env.isSet(fs, o.flag) {
				*o.dst = o.v
			}
		}
		if *until != "" {
			t, err := time.Parse(time.RFC3339Nano, *until)
			if err != nil {
				return fmt.Errorf("--until %q is not an RFC 3339 date-time", *until)
			}
			in.AvailableUntil = &t
		}
		if *info != "" {
			if err := json.Unmarshal([]byte(*info), &in.Info); err != nil {
				return fmt.Errorf("--info is not a JSON array of {title, items}: %w", err)
			}
		}
		c, err := answer[*service.CouponView](a.CreateCoupon(ctx, *cf.pos, *cf.company, conv[client.CreateCouponRequest](in)))
		if err != nil {
			return err
		}
		env.say(c, "issued coupon %s of %s/%s\n", c.Code, c.POSSystemID, c.CompanyID)
		return nil
	})
}

func cmdCouponImport(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var format *string
	return operatorCommand(ctx, env, "coupon import", args, 1, func(f *flag.FlagSet) {
		cf = addCompanyFlags(f)
		format = f.String("format", "", "csv or json (default: from the file name, csv unless it ends in .json)")
	}, func(a *client.Admin, pos []string) error {
		file, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer file.Close()
		if *format == "" {
			*format = "csv"
			if strings.HasSuffix(strings.ToLower(pos[0]), ".json") {
				*format = "json"
			}
		}
		var inputs iter.Seq2[*service.CouponInput, error]
		switch *format {
		case "csv":
			inputs = importfile.ReadCouponsCSV(bufio.NewReaderSize(file, 1<<16))
		case "json":
			inputs = importfile.ReadCouponsJSON(bufio.NewReaderSize(file, 1<<16))
		default:
			return fmt.Errorf("--format %q: want csv or json", *format)
		}
		start := time.Now()
		// The file is read and checked whole first, so that every bad line
		// is named by its number before anything is sent.
		checked, err := service.CheckCoupons(*cf.pos, *cf.company, progress(env, "coupons read", 10_000, inputs))
		if err != nil {
			return nothingImported(err)
		}
		items := make([]client.CreateCouponRequest, len(checked))
		for i, in := range checked {
			items[i] = conv[client.CreateCouponRequest](in)
		}
		if env.terminal {
			fmt.Fprintf(env.stderr, "  sending %d coupons…\n", len(items))
		}
		res, err := a.ImportCoupons(ctx, *cf.pos, *cf.company, client.ImportCouponsRequest{Items: items})
		if err != nil {
			return nothingImported(err)
		}
		n := res.CreatedCount
		env.say(map[string]int{"createdCount": n}, "imported %d coupons into %s/%s in %s\n", n, *cf.pos, *cf.company, time.Since(start).Round(time.Millisecond))
		return nil
	})
}

// nothingImported says that a failed import stored nothing, keeping the
// error's code and fields.
func nothingImported(err error) error {
	var e *posgate.Error
	if errors.As(err, &e) {
		return &posgate.Error{Code: e.Code, Message: "nothing was imported: " + e.Message, Fields: e.Fields}
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return fmt.Errorf("nothing was imported: %s", describeAPI(ce))
	}
	return fmt.Errorf("nothing was imported: %w", err)
}

func cmdCouponShow(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	return operatorCommand(ctx, env, "coupon show", args, 1, func(f *flag.FlagSet) { cf = addCompanyFlags(f) },
		func(a *client.Admin, pos []string) error {
			c, err := answer[*service.CouponView](a.GetCoupon(ctx, *cf.pos, *cf.company, pos[0]))
			if err != nil {
				return err
			}
			printCoupon(env, c)
			return nil
		})
}

func cmdCouponChange(to posgate.CouponStatus) func(ctx context.Context, env *cli, args []string) error {
	name := "coupon redeem"
	if to == posgate.CouponCancelled {
		name = "coupon cancel"
	}
	return func(ctx context.Context, env *cli, args []string) error {
		var cf companyFlags
		return operatorCommand(ctx, env, name, args, 1, func(f *flag.FlagSet) { cf = addCompanyFlags(f) },
			func(a *client.Admin, pos []string) error {
				set := a.RedeemCoupon
				if to == posgate.CouponCancelled {
					set = a.CancelCoupon
				}
				c, err := answer[*service.CouponView](set(ctx, *cf.pos, *cf.company, pos[0]))
				if err != nil {
					return err
				}
				env.say(c, "coupon %s of %s/%s is %s\n", c.Code, c.POSSystemID, c.CompanyID, c.Status)
				return nil
			})
	}
}

// userFlags are the text fields of a loyalty user.
type userFlags struct{ first, last, gender, phone, email *string }

func addUserFlags(f *flag.FlagSet) userFlags {
	return userFlags{first: f.String("first-name", "", "first name"), last: f.String("last-name", "", "last name"),
		gender: f.String("gender", "", "gender (free text)"), phone: f.String("phone", "", "phone"), email: f.String("email", "", "e-mail")}
}

func printUser(env *cli, u *posgate.LoyaltyUser) {
	env.say(u, "loyalty user %s of %s/%s: %s %s, gender %s, phone %s, e-mail %s, %d stamps, %d points\n",
		u.ID, u.POSSystemID, u.CompanyID, orDash(u.FirstName), orDash(u.LastName), orDash(u.Gender), orDash(u.Phone), orDash(u.Email), u.Stamps, u.Points)
}

func cmdLoyaltyUserCreate(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var uf userFlags
	var id *string
	var stamps, points *int
	return operatorCommand(ctx, env, "loyalty-user create", args, 0, func(f *flag.FlagSet) {
		cf, uf = addCompanyFlags(f), addUserFlags(f)
		id = f.String("id", "", "user id (generated when empty)")
		stamps = f.Int("stamps", 0, "initial stamps")
		points = f.Int("points", 0, "initial points")
	}, func(a *client.Admin, _ []string) error {
		if *stamps < 0 || *stamps > math.MaxInt32 || *points < 0 || *points > math.MaxInt32 {
			return fmt.Errorf("--stamps and --points must be 0–%d", math.MaxInt32)
		}
		u, err := answer[*posgate.LoyaltyUser](a.CreateLoyaltyUser(ctx, *cf.pos, *cf.company, client.CreateLoyaltyUserRequest{ID: *id, FirstName: *uf.first, LastName: *uf.last,
			Gender: *uf.gender, Phone: *uf.phone, Email: *uf.email, Stamps: stamps, Points: points}))
		if err != nil {
			return err
		}
		env.human("created ")
		printUser(env, u)
		return nil
	})
}

func cmdLoyaltyUserUpdate(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var uf userFlags
	var fs *flag.FlagSet
	return operatorCommand(ctx, env, "loyalty-user update", args, 1, func(f *flag.FlagSet) {
		fs, cf, uf = f, addCompanyFlags(f), addUserFlags(f)
	}, func(a *client.Admin, pos []string) error {
		var upd service.UpdateLoyaltyUserRequest
		for _, o := range []struct {
			flag string
			dst  **string
			v    *string
		}{{"first-name", &upd.FirstName, uf.first}, {"last-name", &upd.LastName, uf.last}, {"gender", &upd.Gender, uf.gender},
			{"phone", &upd.Phone, uf.phone}, {"email", &upd.Email, uf.email}} {
			if env.isSet(fs, o.flag) {
				*o.dst = o.v
			}
		}
		u, err := answer[*posgate.LoyaltyUser](a.UpdateLoyaltyUser(ctx, *cf.pos, *cf.company, pos[0], conv[client.UpdateLoyaltyUserRequest](&upd)))
		if err != nil {
			return err
		}
		env.human("updated ")
		printUser(env, u)
		return nil
	})
}

func cmdLoyaltyUserAdjust(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var stamps, points *int
	return operatorCommand(ctx, env, "loyalty-user adjust", args, 1, func(f *flag.FlagSet) {
		cf = addCompanyFlags(f)
		stamps = f.Int("stamps", 0, "stamps to add (negative to take)")
		points = f.Int("points", 0, "points to add (negative to take)")
	}, func(a *client.Admin, pos []string) error {
		if *stamps == 0 && *points == 0 {
			return fmt.Errorf("give --stamps or --points")
		}
		if *stamps < math.MinInt32 || *stamps > math.MaxInt32 || *points < math.MinInt32 || *points > math.MaxInt32 {
			return fmt.Errorf("--stamps and --points must fit in 32 bits")
		}
		u, err := answer[*posgate.LoyaltyUser](a.UpdateLoyaltyUser(ctx, *cf.pos, *cf.company, pos[0], conv[client.UpdateLoyaltyUserRequest](&service.UpdateLoyaltyUserRequest{StampsDelta: int32(*stamps), PointsDelta: int32(*points)})))
		if err != nil {
			return err
		}
		env.human("adjusted ")
		printUser(env, u)
		return nil
	})
}

func cmdLoyaltyUserShow(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	return operatorCommand(ctx, env, "loyalty-user show", args, 1, func(f *flag.FlagSet) { cf = addCompanyFlags(f) },
		func(a *client.Admin, pos []string) error {
			u, err := answer[*service.LoyaltyUserView](a.GetLoyaltyUser(ctx, *cf.pos, *cf.company, pos[0]))
			if err != nil {
				return err
			}
			if env.jsonOutput() {
				return env.emit(u, nil)
			}
			printUser(env, u.LoyaltyUser)
			for _, t := range u.RecentTransactions {
				fmt.Fprintf(env.stdout, "  %s %s %s %s: %+d points, %+d stamps\n", t.Date.Format(time.RFC3339), t.TransactionType, t.TransactionID, t.Amount, t.PointsEarned, t.StampsEarned)
			}
			return nil
		})
}

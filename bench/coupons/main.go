// Command coupons writes the request bodies that bench/coupons/run.sh sends:
// one JSON body per line, built from random but real keys of the data set
// that `posgate generate coupons` makes with the same seed and sizes, in the
// mix a till would send.
//
//	go run ./bench/coupons -kind users -n 20000 > users.bodies
//	go run ./bench/coupons -kind coupons -n 20000 > coupons.bodies
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/coupongen"
)

func main() {
	kind := flag.String("kind", "users", "users (loyalty-card user lookup, docs/api.md §6.1) or coupons (coupon search, docs/api.md §5.2)")
	n := flag.Int("n", 20000, "bodies to write")
	users := flag.Int("users", 1_000_000, "the generated data set's --users")
	coupons := flag.Int("coupons", 1_000_000, "the generated data set's --coupons")
	seed := flag.Uint64("seed", 1, "the generated data set's --seed")
	location := flag.String("location", "LOC123", "posLocationId to send")
	flag.Parse()
	cfg := coupongen.Config{Users: *users, Coupons: *coupons, Seed: *seed}
	r := rand.New(rand.NewPCG(*seed, 42))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	for range *n {
		var body map[string]string
		switch *kind {
		case "users":
			body = map[string]string{"posLocationId": *location, "keyword": keyword(cfg, r)}
		case "coupons":
			body = couponSearch(cfg, r, *location)
		default:
			fmt.Fprintf(os.Stderr, "unknown -kind %q\n", *kind)
			os.Exit(2)
		}
		if err := enc.Encode(body); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// keyword is what a cashier types to find a customer: a last name, its
// start, an e-mail, a phone as written or its last digits, a first name.
func keyword(cfg coupongen.Config, r *rand.Rand) string {
	u := cfg.User(r.IntN(cfg.Users))
	switch p := r.IntN(100); {
	case p < 30:
		return u.LastName
	case p < 50:
		last := []rune(u.LastName)
		return string(last[:min(len(last), 4+r.IntN(2))])
	case p < 70:
		return u.Email
	case p < 80:
		return u.Phone
	case p < 90:
		d := posgate.PhoneDigits(u.Phone)
		return d[len(d)-7:]
	default:
		return u.FirstName
	}
}

// couponSearch is a coupon search by code (in any case), by the owner's
// e-mail or phone, or by code at a location.
func couponSearch(cfg coupongen.Config, r *rand.Rand, location string) map[string]string {
	j := r.IntN(cfg.Coupons)
	c := cfg.Coupon(j)
	email, phone := c.Email, c.Phone
	if owner := cfg.Owner(j); owner >= 0 {
		u := cfg.User(owner)
		email, phone = u.Email, u.Phone
	}
	switch p := r.IntN(100); {
	case p < 40:
		if r.IntN(2) == 0 {
			return map[string]string{"code": strings.ToUpper(c.Code)}
		}
		return map[string]string{"code": c.Code}
	case p < 70:
		return map[string]string{"email": email}
	case p < 90:
		return map[string]string{"phone": phone}
	default:
		return map[string]string{"code": c.Code, "posLocationId": location}
	}
}

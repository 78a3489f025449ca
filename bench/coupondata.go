package main

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/benchkeys"
)

// The coupon and loyalty-user data sets are pure functions of a row's index:
// row i is generated from a PCG stream seeded with (dataSeed, i), so the
// loader and the key functions of the scenarios derive the same names,
// e-mails, phones and codes without keeping 1,000,000 rows in memory.
const (
	userSeed   = 0x706f73_75736572 // "posuser"
	couponSeed = 0x706f73_636f7570 // "poscoup"
)

// Name lists of the generated users: ASCII letters only, so that keywords
// cut from them are safe key fields.
var (
	firstNames = strings.Fields(`James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara
		Richard Susan Joseph Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony
		Margaret Mark Sandra Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol
		Kevin Amanda Brian Dorothy George Melissa Timothy Deborah Ronald Stephanie Edward Rebecca Jason Sharon
		Jeffrey Laura Ryan Cynthia Jacob Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen
		Brenda Larry Pamela Justin Emma Scott Nicole Brandon Helen Benjamin Samantha Samuel Katherine Gregory
		Christine Alexander Debra Frank Rachel Patrick Carolyn Raymond Janet Jack Catherine Dennis Maria Jerry
		Heather Tyler Diane Aaron Ruth Jose Julie Adam Olivia Nathan Joyce Henry Virginia Douglas Victoria`)
	lastNames = strings.Fields(`Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez
		Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez
		Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams
		Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz
		Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson
		Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray
		Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez Powell Jenkins
		Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero
		Jordan Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant
		Herrera Gibson Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez
		McDonald Woods Washington Kennedy Wells Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford
		Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder Mason Dixon Munoz Hunt Hicks Holmes Palmer`)
)

// genUser is loyalty user i of the data set (0-based).
func genUser(d *dataset, i int) *posgate.LoyaltyUser {
	r := rand.New(rand.NewPCG(userSeed, uint64(i)))
	first, last := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
	gender := []string{"female", "male", "", "diverse"}[r.IntN(4)]
	return &posgate.LoyaltyUser{
		POSSystemID: d.POSSystem, CompanyID: d.Company, LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("U%07d", i),
			FirstName: first, LastName: last, Gender: gender,
			// The index keeps e-mails and phones unique; the area code varies.
			Email:  fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(first), strings.ToLower(last), i),
			Phone:  fmt.Sprintf("+1%03d%07d", 200+r.IntN(800), i),
			Stamps: int32(r.IntN(10)), Points: int32(r.IntN(5000))},
	}
}

// genCoupon is coupon i of a data set of n coupons and n users: nine in ten
// belong to a random user (several coupons per user happen, as do users
// without one), the rest to a guest with an e-mail and phone of their own;
// one in four is limited to 1–3 locations; one in ten has expired and one
// in twenty is redeemed.
func genCoupon(d *dataset, n, i int) *posgate.Coupon {
	r := rand.New(rand.NewPCG(couponSeed, uint64(i)))
	name, title := fmt.Sprintf("Coupon %d", i), "2 off any large coffee"
	until := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(365*24)) * time.Hour)
	if r.IntN(10) == 0 {
		until = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(365*24)) * time.Hour)
	}
	c := &posgate.Coupon{
		POSSystemID: d.POSSystem, CompanyID: d.Company,
		// Multiplying by an odd constant is a bijection on uint32: codes
		// are unique and look random.
		Code:           fmt.Sprintf("CP%08X", uint32(i)*2654435761),
		RewardProvider: posgate.ProviderTwoReward, Name: &name, Title: &title, AvailableUntil: &until,
		Status: posgate.CouponIssued,
	}
	if r.IntN(20) == 0 {
		c.Status = posgate.CouponRedeemed
	}
	if r.IntN(10) == 0 {
		c.Email = fmt.Sprintf("guest%d@example.net", i)
		c.Phone = fmt.Sprintf("+44%010d", i)
	} else {
		c.UserID = fmt.Sprintf("U%07d", r.IntN(n))
	}
	if r.IntN(4) == 0 {
		for range 1 + r.IntN(3) {
			c.LocationIDs = append(c.LocationIDs, d.Locations[r.IntN(len(d.Locations))])
		}
	}
	c.Normalize()
	return c
}

// loadCouponData loads e.Rows loyalty users and e.Rows coupons: on SQLite
// through the store, each in one transaction; on PostgreSQL with COPY (see
// copyCouponData), which is what a data set of ten million needs. It does so
// once per store run, whichever scenario asks first.
func loadCouponData(ctx context.Context, e *env) error {
	if e.loaded["coupons"] {
		return nil
	}
	if e.Kind == "postgres" {
		if err := copyCouponData(ctx, e); err != nil {
			return err
		}
	} else if err := importCouponData(ctx, e); err != nil {
		return err
	}
	if e.Kind == "postgres" {
		// The steady state a database reaches minutes after a bulk load,
		// when autovacuum has run: without it the first reads of every page
		// write hint bits, and autovacuum itself starts in the middle of the
		// measurement (p99 of several hundred ms at 1,000,000 rows).
		t2 := time.Now()
		if err := e.exec(ctx, "VACUUM (ANALYZE) loyalty_users, loyalty_user_terms, coupons"); err != nil {
			return err
		}
		logf("%s: VACUUM (ANALYZE) of the loaded tables in %s", e.Kind, time.Since(t2).Round(time.Millisecond))
	}
	e.loaded["coupons"] = true
	return nil
}

// sampleKeys builds maxKeys key tuples from random rows (the wrk script
// holds no more than that anyway).
func sampleKeys(e *env, key func(i int) []string) [][]string {
	keys := make([][]string, min(maxKeys, e.Rows))
	for j := range keys {
		keys[j] = key(randInt(e.Rows))
	}
	return keys
}

// couponSearchKeys are (field, value) pairs of the coupon search: a random
// coupon's code, or the e-mail or the phone digits of its owner (the user
// or the guest), in equal parts. With location set, a third field is a
// location the coupon is valid at.
func couponSearchKeys(e *env, location bool) [][]string {
	return sampleKeys(e, func(i int) []string {
		c := genCoupon(e.Data, e.Rows, i)
		email, phone := c.Email, c.Phone
		if c.UserID != "" {
			var u int
			fmt.Sscanf(c.UserID, "U%d", &u)
			owner := genUser(e.Data, u)
			email, phone = owner.Email, owner.Phone
		}
		var k []string
		switch i % 3 {
		case 0:
			k = []string{"code", strings.ToLower(c.Code)}
		case 1:
			k = []string{"email", strings.ToUpper(email)}
		default:
			k = []string{"phone", posgate.PhoneDigits(phone)}
		}
		if location {
			k = append(k, couponLocation(e, c))
		}
		return k
	})
}

// couponLocation is a location where c is valid.
func couponLocation(e *env, c *posgate.Coupon) string {
	if len(c.LocationIDs) > 0 {
		return c.LocationIDs[randInt(len(c.LocationIDs))]
	}
	return e.Data.Locations[randInt(len(e.Data.Locations))]
}

// couponLookupKeys are (location, code) pairs: a random coupon, in any
// case, at a location where it is valid.
func couponLookupKeys(e *env) [][]string {
	return sampleKeys(e, func(i int) []string {
		c := genCoupon(e.Data, e.Rows, i)
		code := c.Code
		if i%2 == 1 {
			code = strings.ToLower(code)
		}
		return []string{couponLocation(e, c), code}
	})
}

// userKeywordKeys are (location, keyword) pairs: keywords of the kinds of
// benchkeys.Kinds (names, e-mail local parts, phone digits) cut from random
// users, in equal parts.
func userKeywordKeys(e *env) [][]string {
	return sampleKeys(e, func(i int) []string {
		u := genUser(e.Data, i)
		kw := benchkeys.Kinds[i%len(benchkeys.Kinds)].Cut(randInt, benchkeys.User{First: u.FirstName, Last: u.LastName, Email: u.Email, Phone: u.Phone})
		return []string{e.Data.Locations[randInt(len(e.Data.Locations))], kw}
	})
}

// importCouponData imports the data set through the store, streaming the
// generated rows.
func importCouponData(ctx context.Context, e *env) error {
	d, n := e.Data, e.Rows
	t0 := time.Now()
	users, err := e.Store.ImportLoyaltyUsers(ctx, func(yield func(*posgate.LoyaltyUser, error) bool) {
		for i := range n {
			if !yield(genUser(d, i), nil) {
				return
			}
		}
	})
	if err != nil {
		return fmt.Errorf("import loyalty users: %w", err)
	}
	t1 := time.Now()
	coupons, err := e.Store.ImportCoupons(ctx, iter.Seq2[*posgate.Coupon, error](func(yield func(*posgate.Coupon, error) bool) {
		for i := range n {
			if !yield(genCoupon(d, n, i), nil) {
				return
			}
		}
	}))
	if err != nil {
		return fmt.Errorf("import coupons: %w", err)
	}
	logf("%s: %d loyalty users in %s, %d coupons in %s", e.Kind, users, t1.Sub(t0).Round(time.Millisecond),
		coupons, time.Since(t1).Round(time.Millisecond))
	return nil
}

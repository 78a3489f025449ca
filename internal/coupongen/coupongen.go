// Package coupongen makes large, deterministic sets of loyalty users and
// coupons for one company, for `posgate generate coupons` and the coupon
// benchmark (bench/coupons). Item i is a pure function of the seed and i, so
// that the benchmark can pick real search keys without reading the store.
package coupongen

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// Config describes a generated data set.
type Config struct {
	POSSystemID string
	CompanyID   string
	Users       int // loyalty users G0000000…
	Coupons     int // coupons, nine in ten owned by a generated user
	Seed        uint64
	// LocationIDs are the company's locations; one coupon in five is
	// limited to one of them (none when empty).
	LocationIDs []string
	// Now anchors availableUntil: some coupons expired before it, the
	// others end after it.
	Now time.Time
}

// hash is splitmix64 of the seed, a stream number and i: cheap, and good
// enough to spread names and statuses evenly.
func (c Config) hash(stream, i uint64) uint64 {
	z := c.Seed + stream*0x9e3779b97f4a7c15 + i*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

var (
	firstNames = strings.Fields(`James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard
		Susan Joseph Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark
		Sandra Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy
		George Melissa Timothy Deborah Ronald Stephanie Edward Rebecca Jason Sharon Jeffrey Laura Ryan Cynthia Jacob Kathleen
		Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen Brenda Larry Pamela Justin Emma Scott Nicole Brandon Helen
		Benjamin Samantha Samuel Katherine Gregory Christine Alexander Debra Frank Rachel Patrick Carolyn Raymond Janet Jack
		Catherine Dennis Maria Jerry Heather Tyler Diane Aaron Ruth Jose Julie Adam Olivia Nathan Joyce Henry Virginia Douglas
		Victoria Zachary Kelly Peter Lauren Kyle Christina Ethan Joan Walter Evelyn Noah Judith Jeremy Megan Christian Andrea
		Keith Cheryl Roger Hannah Terry Jacqueline Gerald Martha Harold Gloria Sean Teresa Austin Ann Carl Sara Arthur Madison
		Lawrence Frances Dylan Kathryn Jesse Janice Jordan Jean Bryan Abigail Billy Alice Joe Julia Bruce Judy Gabriel Sophia
		Logan Grace Albert Denise Willie Amber Alan Doris Juan Marilyn Wayne Danielle Elijah Beverly Randy Isabella Roy Theresa
		Vincent Diana Ralph Natalie Eugene Brittany Russell Charlotte Bobby Marie Mason Kayla Philip Alexis Louis Lori Álvaro
		Zoë Søren José Renée Chloé Jürgen`)
	lastNames = strings.Fields(`Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez
		Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis
		Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell
		Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy
		Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks
		Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez
		Powell Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero Jordan
		Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson Ellis Tran
		Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods Washington Kennedy Wells
		Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder
		Mason Dixon Munoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice
		Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Grant Dunn Kelley Spencer Hawkins Arnold
		Pierce Vazquez Hansen Peters Santos Hart Bradley Knight Elliott Cunningham Duncan Armstrong Hudson Carroll Lane Riley
		Andrews Alvarado Ray Delgado Berry Perkins Hoffman Johnston Matthews Peña Richards Willis Carpenter Lawrence Sandoval
		Öztürk Müller Dubois Kowalski Nowak Rossi Bianchi Yamamoto Tanaka Sato Novák Jensen Larsen Virtanen Ivanova`)
	domains  = []string{"mail.example", "inbox.example", "post.example", "example.com", "example.net", "example.org", "shop.example", "web.example"}
	genders  = []string{"Female", "Male", "Female", "Male", "Other", ""}
	rewards  = []string{"5% off", "10% off", "15% off", "$5 off", "Free coffee", "Free dessert", "Buy one get one", "Double points"}
	products = []string{"your next purchase", "any drink", "bakery items", "a large pizza", "all snacks", "the weekly special"}
)

// UserID is the id of generated user i.
func UserID(i int) string { return fmt.Sprintf("G%07d", i) }

// User returns generated user i (0 ≤ i < Users).
func (c Config) User(i int) *posgate.LoyaltyUser {
	h := c.hash(1, uint64(i))
	first := firstNames[h%uint64(len(firstNames))]
	last := lastNames[(h>>16)%uint64(len(lastNames))]
	domain := domains[(h>>32)%uint64(len(domains))]
	area := 201 + (h>>40)%798
	return &posgate.LoyaltyUser{
		POSSystemID: c.POSSystemID,
		CompanyID:   c.CompanyID, LoyaltyCard: posgate.LoyaltyCard{ID: UserID(i),
			FirstName: first,
			LastName:  last,
			Gender:    genders[(h>>48)%uint64(len(genders))],
			Phone:     fmt.Sprintf("+1 (%03d) %03d-%04d", area, (i/10000)%1000, i%10000),
			Email:     posgate.Fold(emailLocal(first)) + "." + posgate.Fold(emailLocal(last)) + strconv.Itoa(i) + "@" + domain,
			Stamps:    int32(h % 10),
			Points:    int32((h >> 8) % 5000)},
	}
}

// emailLocal keeps the ASCII letters of a name, as e-mail addresses usually
// do.
func emailLocal(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 {
			return r
		}
		return -1
	}, name)
}

// Code is the code of generated coupon j: eight base-36 characters from a
// bijection of j (so codes never collide, even without regard to case),
// with letters in mixed case.
func (c Config) Code(j int) string {
	const space = 2821109907456 // 36^8
	v := (uint64(j)*1_000_003 + c.Seed%space) % space
	s := []byte(fmt.Sprintf("%08s", strconv.FormatUint(v, 36)))
	h := c.hash(2, uint64(j))
	for k := range s {
		if s[k] >= 'a' && h&(1<<k) != 0 {
			s[k] -= 'a' - 'A'
		}
	}
	return string(s)
}

// Owner returns the index of the user that owns coupon j, or -1 for a
// coupon owned through an e-mail and phone of its own.
func (c Config) Owner(j int) int {
	if c.Users == 0 || c.hash(3, uint64(j))%10 == 0 {
		return -1
	}
	return int((uint64(j) * 7919) % uint64(c.Users))
}

// Coupon returns generated coupon j (0 ≤ j < Coupons).
func (c Config) Coupon(j int) *posgate.Coupon {
	h := c.hash(4, uint64(j))
	reward := rewards[h%uint64(len(rewards))]
	cp := &posgate.Coupon{
		POSSystemID:    c.POSSystemID,
		CompanyID:      c.CompanyID,
		Code:           c.Code(j),
		RewardProvider: posgate.RewardProviders[(h>>8)%10/7], // TwoReward 70%, PJM 30%
		Name:           &reward,
		Status:         posgate.CouponIssued,
	}
	if (h>>12)%4 != 0 {
		title := reward + " " + products[(h>>16)%uint64(len(products))]
		cp.Title = &title
	}
	if (h>>20)%2 == 0 {
		u := fmt.Sprintf("https://img.example.com/coupons/%d.png", (h>>24)%64)
		cp.PictureURL = &u
	}
	if (h>>30)%10 < 3 {
		minimum := strconv.Itoa(int(5 + (h>>34)%50))
		cp.Info = []posgate.CouponInfo{{Title: ptr("Terms"), Items: map[string]*string{"minimumSpend": &minimum, "combinable": nil}}}
	}
	switch (h >> 40) % 10 {
	case 0:
		cp.Status = posgate.CouponRedeemed
	case 1:
		cp.Status = posgate.CouponCancelled
	case 2: // Issued, but expired
		cp.AvailableUntil = ptr(c.Now.Add(-time.Duration(1+(h>>44)%90) * 24 * time.Hour).Truncate(time.Hour))
	}
	if cp.AvailableUntil == nil && (h>>50)%10 != 0 {
		cp.AvailableUntil = ptr(c.Now.Add(time.Duration(30+(h>>44)%335) * 24 * time.Hour).Truncate(time.Hour))
	}
	if len(c.LocationIDs) > 0 && (h>>54)%5 == 0 {
		cp.LocationIDs = []string{c.LocationIDs[(h>>57)%uint64(len(c.LocationIDs))]}
	}
	if owner := c.Owner(j); owner >= 0 {
		cp.UserID = UserID(owner)
	} else {
		cp.Email = fmt.Sprintf("guest%d@guests.example", j)
		cp.Phone = fmt.Sprintf("+1 555 %03d %04d", (j/10000)%1000, j%10000)
	}
	return cp
}

// AllUsers yields every generated user, for Store.ImportLoyaltyUsers.
func (c Config) AllUsers() iter.Seq2[*posgate.LoyaltyUser, error] {
	return func(yield func(*posgate.LoyaltyUser, error) bool) {
		for i := range c.Users {
			if !yield(c.User(i), nil) {
				return
			}
		}
	}
}

// AllCoupons yields every generated coupon, for Store.ImportCoupons.
func (c Config) AllCoupons() iter.Seq2[*posgate.Coupon, error] {
	return func(yield func(*posgate.Coupon, error) bool) {
		for j := range c.Coupons {
			if !yield(c.Coupon(j), nil) {
				return
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

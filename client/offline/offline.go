// Package offline lets a till go on selling while it cannot reach posgate,
// from the location's offline kit (docs/api.md §24): it verifies the kit
// against the identity provider's JWKS, evaluates baskets and checks
// coupons from it with the server's own rules (the root package's
// PromotionIndex.Evaluate and Coupon.Redeemability, not a copy of them),
// refuses the coupons outside the kit's allowance, and keeps the sales made
// offline for the batch replay, each naming the kit its coupons were
// redeemed under.
package offline

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // a till reads the kit's time zone wherever it runs

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
)

// Kit is a verified offline kit: its payload, with the sections of a delta
// completed from the kit it is a delta of, and its promotions arranged for
// evaluation.
type Kit struct {
	*posgate.OfflineKit
	ix *posgate.PromotionIndex
}

// Open verifies jws, a kit as GetOfflineKit answered it, against the keys
// of jwks (GetJWKS) and reads it: the signature (ES256, by a key of the
// JWKS named by "kid"), the type (posgate.KitType) and the audience
// (posgate.KitAudience). prev is the kit the till holds, for a delta (nil
// for none). A kit that fails any check is an error, and the till keeps the
// kit it had.
func Open(jws string, jwks *client.JWKS, prev *Kit) (*Kit, error) {
	payload, err := verify(jws, jwks)
	if err != nil {
		return nil, err
	}
	k := &posgate.OfflineKit{}
	if err := json.Unmarshal(payload, k); err != nil {
		return nil, fmt.Errorf("offline kit: payload: %w", err)
	}
	if k.Audience != posgate.KitAudience {
		return nil, fmt.Errorf("offline kit: audience %q, want %q", k.Audience, posgate.KitAudience)
	}
	var held *posgate.OfflineKit
	if prev != nil {
		held = prev.OfflineKit
	}
	if err := k.Merge(held); err != nil {
		return nil, err
	}
	kit := &Kit{OfflineKit: k}
	if k.PosStatus == posgate.PosAccepted {
		kit.ix = k.Index()
	}
	return kit, nil
}

// verify checks a compact JWS's ES256 signature by the key of jwks its
// header names, and its type, and returns its payload.
func verify(jws string, jwks *client.JWKS) ([]byte, error) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, errors.New("offline kit: not a compact JWS")
	}
	enc := base64.RawURLEncoding
	hb, err := enc.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("offline kit: header: %w", err)
	}
	var h struct{ Alg, Kid, Typ string }
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, fmt.Errorf("offline kit: header: %w", err)
	}
	if h.Alg != "ES256" || h.Typ != posgate.KitType {
		return nil, fmt.Errorf("offline kit: alg %q and typ %q, want ES256 and %s", h.Alg, h.Typ, posgate.KitType)
	}
	key, err := publicKey(jwks, h.Kid)
	if err != nil {
		return nil, err
	}
	sig, err := enc.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, errors.New("offline kit: the signature is not 64 bytes of base64url")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(key, digest[:], r, s) {
		return nil, errors.New("offline kit: the signature does not verify")
	}
	payload, err := enc.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("offline kit: payload: %w", err)
	}
	return payload, nil
}

// publicKey is the P-256 key kid of jwks.
func publicKey(jwks *client.JWKS, kid string) (*ecdsa.PublicKey, error) {
	if jwks == nil {
		return nil, errors.New("offline kit: no JWKS")
	}
	for _, k := range jwks.Keys {
		if k.Kid != kid {
			continue
		}
		if k.Kty != "EC" || k.Crv != "P-256" {
			return nil, fmt.Errorf("offline kit: key %q is not an EC P-256 key", kid)
		}
		x, errX := base64.RawURLEncoding.DecodeString(k.X)
		y, errY := base64.RawURLEncoding.DecodeString(k.Y)
		if errX != nil || errY != nil {
			return nil, fmt.Errorf("offline kit: key %q: bad coordinates", kid)
		}
		pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		if !pub.Curve.IsOnCurve(pub.X, pub.Y) {
			return nil, fmt.Errorf("offline kit: key %q is not on P-256", kid)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("offline kit: the JWKS has no key %q (fetch it again, or the kit again after a key rotation)", kid)
}

// Evaluate applies the kit's promotions to a basket at time at, as the
// evaluate endpoint would at the kit's location without coupons
// (docs/api.md §18.2): EvaluateCoupons with none.
func (k *Kit) Evaluate(at time.Time, lines []posgate.BasketLine) (*posgate.Evaluation, error) {
	return k.EvaluateCoupons(at, lines, nil)
}

// EvaluateCoupons applies the kit's promotions to a basket at time at with
// the coupon codes presented, as the evaluate endpoint would at the kit's
// location (docs/api.md §18.2, §18.3): a line without a category gets its
// product's from the kit's catalogue, wall-clock dates are read in the
// location's time zone, and a coupon that CheckCoupon finds redeemable
// brings the promotion it carries. The one evaluation is the server's,
// posgate.PromotionIndex.EvaluateInput; promotion budgets, which only the
// server counts, are not known offline (docs/api.md §24.4).
func (k *Kit) EvaluateCoupons(at time.Time, lines []posgate.BasketLine, codes []string) (*posgate.Evaluation, error) {
	if k.ix == nil {
		return nil, errors.New("offline kit: the place is disabled (posStatus " + string(k.PosStatus) + ")")
	}
	lines = append([]posgate.BasketLine(nil), lines...)
	for i := range lines {
		if lines[i].Category == "" && lines[i].CatalogCategory == "" {
			lines[i].CatalogCategory, _ = k.ix.ProductCategory(lines[i].ProductID)
		}
	}
	zone := time.UTC
	if k.Promotions != nil {
		z, err := posgate.LoadZone(k.Promotions.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("offline kit: %w", err)
		}
		zone = z
	}
	in := posgate.EvaluationInput{LocationID: k.LocationID, At: at.In(zone), Lines: lines}
	for _, code := range codes {
		if k.CheckCoupon(code, at) != "" {
			continue
		}
		if _, c, ok := k.Allowance.Verdict(code, k.LocationID, at); ok {
			in.Coupons = append(in.Coupons, posgate.EvaluationCoupon{Code: c.Code, PromotionID: c.PromotionID})
		}
	}
	return k.ix.EvaluateInput(in)
}

// CheckCoupon says whether a coupon could be redeemed offline at time at
// (docs/api.md §24.4): "" when it could, else the reason. A coupon of the
// allowance is judged by the server's rule (posgate.Coupon.Redeemability)
// and its refusal worded as the evaluate endpoint words it; a coupon the
// allowance does not list, or an allowance not valid at time at, is
// refused: the till cannot know it.
func (k *Kit) CheckCoupon(code string, at time.Time) string {
	a := k.Allowance
	switch {
	case a == nil || k.Loyalty == nil:
		return "The offline kit has no allowance (posStatus " + string(k.PosStatus) + ")."
	case !k.Loyalty.CouponsEnabled:
		return "Coupons are switched off for this company."
	case !a.ValidAt(at):
		return fmt.Sprintf("The offline kit's allowance is valid from %s to %s.", a.IssuedAt.Format(time.RFC3339), a.ExpiresAt.Format(time.RFC3339))
	}
	v, c, ok := a.Verdict(code, k.LocationID, at.UTC())
	if !ok {
		return fmt.Sprintf("The coupon '%s' is not in the offline allowance.", code)
	}
	return posgate.CouponPreviewMessage(v, c, k.LocationID)
}

// Till is a terminal selling offline from a kit: it redeems coupons within
// the kit's allowance and keeps the sales for the replay. It is safe for
// concurrent use.
type Till struct {
	mu       sync.Mutex
	kit      *Kit
	redeemed map[string]bool // folded codes redeemed under kit
	pending  []client.TransactionRequest
}

// NewTill starts selling offline from kit.
func NewTill(kit *Kit) *Till { return &Till{kit: kit, redeemed: map[string]bool{}} }

// Kit is the kit the till sells from.
func (t *Till) Kit() *Kit {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.kit
}

// SetKit replaces the kit (a fresh one fetched when the till was online):
// the count of offline redemptions starts again with it.
func (t *Till) SetKit(kit *Kit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kit.ID != t.kit.ID {
		t.redeemed = map[string]bool{}
	}
	t.kit = kit
}

// Refusal is a coupon (or a sale, Code "") the till refuses offline, and
// why.
type Refusal struct {
	Code, Reason string
}

func (r *Refusal) Error() string { return r.Reason }

// Redeem redeems a coupon offline at time at, or refuses it (*Refusal):
// outside the allowance, not redeemable by the server's rule, redeemed
// on this till already, or once the allowance's maxRedemptions are used
// up.
func (t *Till) Redeem(code string, at time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if msg := t.kit.CheckCoupon(code, at); msg != "" {
		return &Refusal{Code: code, Reason: msg}
	}
	key := posgate.Fold(code)
	switch {
	case t.redeemed[key]:
		return &Refusal{Code: code, Reason: "The coupon has already been redeemed."}
	case len(t.redeemed) >= t.kit.Allowance.MaxRedemptions:
		return &Refusal{Code: code, Reason: fmt.Sprintf("The offline allowance of %d redemptions is used up.", t.kit.Allowance.MaxRedemptions)}
	}
	t.redeemed[key] = true
	return nil
}

// Redemptions is how many coupons the till redeemed under its kit.
func (t *Till) Redemptions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.redeemed)
}

// Sell records a sale made offline for the replay: its couponCodes are the
// coupons Redeem accepted, and the sale names the kit they were redeemed
// under (offline.kitId). A kit whose place is disabled, or whose company
// has transactions switched off, refuses the sale (*Refusal): posgate
// would record nothing of it (docs/api.md §13.1, §24.2).
func (t *Till) Sell(sale client.TransactionRequest) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch k := t.kit; {
	case k.PosStatus != posgate.PosAccepted || k.Loyalty == nil:
		return &Refusal{Reason: "The offline kit's place is disabled (posStatus " + string(k.PosStatus) + "): nothing would be recorded."}
	case !k.Loyalty.TransactionsEnabled:
		return &Refusal{Reason: "Transactions are switched off for this company: nothing would be recorded."}
	}
	if len(sale.CouponCodes) > 0 {
		sale.Offline = &client.OfflineRef{KitID: t.kit.ID}
	}
	t.pending = append(t.pending, sale)
	return nil
}

// Pending are the sales waiting for the replay, in the order sold.
func (t *Till) Pending() []client.TransactionRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]client.TransactionRequest(nil), t.pending...)
}

// maxBatch is the replay's batch size (docs/api.md §13.6).
const maxBatch = 1000

// Replay sends the pending sales through the batch replay (docs/api.md
// §13.6) with their original dates, at most 1,000 at a time, and forgets
// each batch once posgate answered it; it returns the answers. A failed
// request keeps the sales not yet answered, for another replay: a sale
// replayed twice is a Duplicate with its first answer.
func (t *Till) Replay(ctx context.Context, c *client.Client, posSystemID string) ([]*client.BatchResult, error) {
	var out []*client.BatchResult
	for {
		t.mu.Lock()
		n := min(len(t.pending), maxBatch)
		items := append([]client.TransactionRequest(nil), t.pending[:n]...)
		t.mu.Unlock()
		if n == 0 {
			return out, nil
		}
		res, err := c.ReplayTransactions(ctx, posSystemID, client.BatchRequest{Items: items})
		if err != nil {
			return out, err
		}
		out = append(out, res)
		t.mu.Lock()
		t.pending = t.pending[n:]
		t.mu.Unlock()
	}
}

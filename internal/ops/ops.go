// Package ops holds the operator operations that the CLI and the operator API
// share, so that both apply the same checks and produce the same errors.
package ops

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth"
)

// FeaturePatch names feature switches to change; nil leaves one as it is.
type FeaturePatch struct {
	Coupons          *bool `json:"coupons"`
	ReceiptPromotion *bool `json:"receiptPromotion"`
	Carousel         *bool `json:"carousel"`
	PromotionImport  *bool `json:"promotionImport"`
	Transactions     *bool `json:"transactions"`
}

// Apply returns f with the patch's switches applied.
func (p *FeaturePatch) Apply(f posgate.Features) posgate.Features {
	if p == nil {
		return f
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&f.Coupons, p.Coupons)
	set(&f.ReceiptPromotion, p.ReceiptPromotion)
	set(&f.Carousel, p.Carousel)
	set(&f.PromotionImport, p.PromotionImport)
	set(&f.Transactions, p.Transactions)
	return f
}

// Set records that feature name is to be switched on or off.
func (p *FeaturePatch) Set(name posgate.Feature, on bool) error {
	var dst **bool
	switch name {
	case posgate.FeatureCoupons:
		dst = &p.Coupons
	case posgate.FeatureReceiptPromotion:
		dst = &p.ReceiptPromotion
	case posgate.FeatureCarousel:
		dst = &p.Carousel
	case posgate.FeaturePromotionImport:
		dst = &p.PromotionImport
	case posgate.FeatureTransactions:
		dst = &p.Transactions
	default:
		var f posgate.Features
		return f.Set(name, on) // the domain's error, naming the known features
	}
	*dst = &on
	return nil
}

// UpdateCompany changes a company's name, status and some feature switches,
// leaving the switches the patch does not name as they are.
func UpdateCompany(ctx context.Context, st posgate.Store, posSystemID, companyID string, name *string, status *posgate.Status, features *FeaturePatch) (*posgate.Company, error) {
	if status != nil && !status.Valid() {
		return nil, invalid("status", fmt.Sprintf("The status field must be %s or %s.", posgate.StatusActive, posgate.StatusDisabled))
	}
	upd := posgate.CompanyUpdate{Name: name, Status: status}
	if features != nil {
		c, err := st.FindCompany(ctx, posSystemID, companyID)
		if err != nil {
			return nil, err
		}
		f := features.Apply(c.Features)
		upd.Features = &f
	}
	return st.UpdateCompany(ctx, posSystemID, companyID, upd)
}

// CreateClient completes and stores a new API client: it generates the id
// when c.ID is empty and always generates the secret, which it returns. The
// secret is shown to the operator once; only its hash is stored.
func CreateClient(ctx context.Context, st posgate.Store, c *posgate.Client) (string, error) {
	if c.ID == "" {
		c.ID = "client-" + randomID()
	}
	secret, err := auth.GenerateSecret()
	if err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	c.SecretHash = auth.HashSecret(secret)
	c.Scopes = dedupe(c.Scopes)
	c.CompanyIDs = dedupe(c.CompanyIDs)
	if err := c.Validate(); err != nil {
		return "", err
	}
	if c.POSSystemID != "" {
		if _, err := st.FindPOSSystem(ctx, c.POSSystemID); err != nil {
			return "", notFound(err, "POS system '%s' not found.", c.POSSystemID)
		}
		for _, id := range c.CompanyIDs {
			if _, err := st.FindCompany(ctx, c.POSSystemID, id); err != nil {
				return "", notFound(err, "Company '%s' of POS system '%s' not found.", id, c.POSSystemID)
			}
		}
	}
	if err := st.CreateClient(ctx, c); err != nil {
		return "", err
	}
	return secret, nil
}

// randomID returns 16 lower-case base32 characters (80 bits).
func randomID() string {
	var b [10]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

func dedupe(xs []string) []string {
	out := make([]string, 0, len(xs))
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func invalid(field, msg string) error {
	v := posgate.ValidationError{}
	v.Add(field, msg)
	return v.Err()
}

// notFound rewords a store's not-found error; other errors pass unchanged.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, posgate.ErrNotFound) {
		return posgate.Errorf(posgate.ENOTFOUND, format, args...)
	}
	return err
}

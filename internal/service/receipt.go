package service

import (
	"context"

	"github.com/posgate/posgate"
)

// ReceiptPromotion is the receipt promotion's answer (docs/api.md §8.1).
type ReceiptPromotion struct {
	PrimaryText   string            `json:"primaryText"`
	SecondaryText string            `json:"secondaryText"`
	ImageURL      string            `json:"imageUrl"`
	PosStatus     posgate.PosStatus `json:"posStatus"`
}

// ReceiptPromotion returns what a location's receipts print: the location's
// receipt promotion, else the company default, with the URL of its QR
// image; NotAvailable with empty strings when neither is set, Disabled when
// the company or location is disabled or the feature is off.
func (s *Service) ReceiptPromotion(ctx context.Context, p *posgate.Principal, posSystemID, locationID string) (*ReceiptPromotion, error) {
	loc, err := s.posLocation(ctx, p, posSystemID, locationID)
	if err != nil {
		return nil, err
	}
	return s.receiptFor(ctx, posSystemID, loc)
}

// receiptFor is the receipt promotion of a location the caller may see;
// the transaction's answer carries it too (docs/api.md §13.1).
func (s *Service) receiptFor(ctx context.Context, posSystemID string, loc *posgate.Location) (*ReceiptPromotion, error) {
	if placeStatus(loc, posgate.FeatureReceiptPromotion) != posgate.PosAccepted {
		return &ReceiptPromotion{PosStatus: posgate.PosDisabled}, nil
	}
	rp, err := s.store.EffectiveReceiptPromotion(ctx, posSystemID, loc.CompanyID, loc.ID)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return &ReceiptPromotion{PosStatus: posgate.PosNotAvailable}, nil
	} else if err != nil {
		return nil, err
	}
	img, err := s.qrURL(ctx, rp.TargetURL)
	if err != nil {
		return nil, err
	}
	return &ReceiptPromotion{PrimaryText: rp.PrimaryText, SecondaryText: rp.SecondaryText, ImageURL: img, PosStatus: posgate.PosAccepted}, nil
}

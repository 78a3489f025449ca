package service

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// TestEvaluationLinesJSON compares the lines' own JSON with what
// encoding/json writes for the same values (posgate's encoder, without HTML
// escaping), on random lines whose texts hold every kind of character that
// JSON escapes.
func TestEvaluationLinesJSON(t *testing.T) {
	// plain has the fields of EvaluationLine without its MarshalJSON.
	type plain struct {
		ProductID  string             `json:"productId"`
		Subtotal   posgate.MinorUnits `json:"subtotal"`
		Discount   posgate.MinorUnits `json:"discount"`
		Total      posgate.MinorUnits `json:"total"`
		Promotions []LinePromotion    `json:"promotions"`
		NotApplied []LineRejection    `json:"notApplied"`
	}
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z9", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "<&>", "é", "€", "\u2028", "\u2029", "\xff", "\xe2\x82", "😀", " ", "/"}
	text := func() string {
		var b []byte
		for range r.IntN(6) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		return string(b)
	}
	opt := func() *string {
		if r.IntN(2) == 0 {
			return nil
		}
		s := text()
		return &s
	}
	for range 500 {
		var ls EvaluationLines
		var ps []plain
		for range r.IntN(4) {
			l := EvaluationLine{ProductID: text(), Subtotal: posgate.MinorUnits(r.Int64N(1e11)), Discount: posgate.MinorUnits(r.Int64N(1000)),
				Total: posgate.MinorUnits(r.Int64N(1e6) - 5), Promotions: []LinePromotion{}, NotApplied: []LineRejection{}}
			for range r.IntN(3) {
				l.Promotions = append(l.Promotions, LinePromotion{ID: text(), Discount: posgate.MinorUnits(r.Int64N(1e5)), CouponCode: opt()})
			}
			for range r.IntN(4) {
				l.NotApplied = append(l.NotApplied, LineRejection{ID: text(), Reason: posgate.RejectionReason(text()), LostTo: opt()})
			}
			ls = append(ls, l)
			ps = append(ps, plain(l))
		}
		if ps == nil {
			ps = []plain{}
			ls = EvaluationLines{}
		}
		got, err := encode.JSONInto(new(bytes.Buffer), map[string]any{"lines": ls})
		if err != nil {
			t.Fatal(err)
		}
		want, err := encode.JSONInto(new(bytes.Buffer), map[string]any{"lines": ps})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("not JSON: %s", got)
		}
		// The whole answer, with the product id of a line that looks like
		// the lines' key.
		code, msg := text(), `,"lines":[]`
		ev := &Evaluation{PosStatus: posgate.PosAccepted, Subtotal: 1250, Total: 1000, TotalDiscount: 250, Lines: ls,
			Promotions: []posgate.AppliedPromotion{{ID: text(), Name: msg, PromotionType: posgate.PromotionBuyXGetY, Value: 0.1 + 0.2,
				Discount: 250, ProductIDs: []string{text()}}},
			Coupons: []CouponCheck{{Code: code, ErrorMessage: &msg}, {Code: text(), Redeemable: true, PromotionID: opt(), Discount: 5}}}
		if r.IntN(2) == 0 {
			ev.Loyalty = &LoyaltyPreview{UserID: text(), Points: 3, PointsToEarn: 7}
		}
		all, err := ev.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		whole, err := encode.JSONInto(new(bytes.Buffer), ev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(all, append([]byte("prefix"), whole...)) {
			t.Fatalf("AppendJSON\n got  %s\nwant prefix%s", all, whole)
		}
	}
}

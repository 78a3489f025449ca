package demo

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/posgate/posgate"
)

// Demo content: three carousel slides for demo-company and a receipt
// promotion for LOC123 only, so that LOC456 shows the NotAvailable answer.
const (
	ReceiptLocation = "LOC123"
	ReceiptTarget   = "https://example.com/demo/receipt-offer"
)

// demoSlides are self-contained (their images are data: URLs), so the demo
// carousel works on a terminal without internet access.
func demoSlides() []*posgate.Slide {
	mk := func(id string, pos int, color, label, title, text string, seconds int) *posgate.Slide {
		svg := `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="450" viewBox="0 0 800 450">` +
			`<rect width="800" height="450" rx="24" fill="` + color + `"/>` +
			`<text x="400" y="260" font-family="sans-serif" font-size="120" font-weight="bold" text-anchor="middle" fill="#fff">` + label + `</text></svg>`
		return &posgate.Slide{POSSystemID: POSSystemID, CompanyID: CompanyID, ID: id, Position: pos,
			ImageURL: "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)),
			Title:    title, Text: text, DurationSeconds: seconds}
	}
	return []*posgate.Slide{
		mk("welcome", 1, "#1d3557", "Welcome", "Welcome to Demo Company", "Ask the cashier about our loyalty card.", 8),
		mk("coffee", 2, "#6f4518", "2 for 1", "Coffee: two for one", "Every morning until 10 am.", 6),
		mk("loyalty", 3, "#0b6e4f", "+10 pts", "Collect points", "10 points for every purchase over $20.", 6),
	}
}

// loadContent creates the demo slides and LOC123's receipt promotion when
// absent; an operator's changes to them survive a reload.
func loadContent(ctx context.Context, st posgate.Store) error {
	for _, s := range demoSlides() {
		if err := st.CreateSlide(ctx, s); err != nil && !errors.Is(err, posgate.ErrConflict) {
			return fmt.Errorf("slide %s: %w", s.ID, err)
		}
	}
	_, err := st.FindReceiptPromotion(ctx, POSSystemID, CompanyID, ReceiptLocation)
	if !errors.Is(err, posgate.ErrNotFound) {
		return err
	}
	return st.PutReceiptPromotion(ctx, &posgate.ReceiptPromotion{POSSystemID: POSSystemID, CompanyID: CompanyID, LocationID: ReceiptLocation,
		PrimaryText: "Thank you for shopping at Demo Store Downtown!", SecondaryText: "Scan the code for 10% off your next visit.",
		TargetURL: ReceiptTarget})
}

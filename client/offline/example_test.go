package offline_test

import (
	"context"
	"fmt"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/client/offline"
)

// A till fetches its kit while online, sells and redeems from it while
// offline, and replays its sales when back.
func Example() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:8080", client.WithCredentials("demo-pos", "demo-pos-secret", "pos_integration"))
	ans, err := c.GetOfflineKit(ctx, "clover", "LOC123", client.KitQuery{TerminalID: "TERM-05"})
	if err != nil {
		return
	}
	jwks, err := c.GetJWKS(ctx)
	if err != nil {
		return
	}
	kit, err := offline.Open(ans.JWS, jwks, nil)
	if err != nil {
		return
	}
	till := offline.NewTill(kit)

	// Offline.
	now := time.Now()
	ev, err := kit.Evaluate(now, []posgate.BasketLine{{ProductID: "SKU-LATTE-L", Quantity: 2000, UnitPrice: 500}})
	if err == nil {
		fmt.Println("discount", ev.TotalDiscount)
	}
	var codes []string
	if err := till.Redeem("Sl75Ev", now); err == nil {
		codes = append(codes, "Sl75Ev")
	} else {
		fmt.Println("refused:", err)
	}
	if err := till.Sell(client.TransactionRequest{TransactionID: "OFF-1", TerminalID: "TERM-05", PosLocationID: "LOC123",
		TransactionAmount: 8, TransactionDate: now, CouponCodes: codes}); err != nil {
		fmt.Println("refused:", err) // the place is disabled or transactions are switched off
	}

	// Back online.
	results, err := till.Replay(ctx, c, "clover")
	if err == nil {
		fmt.Println(results[0].Status)
	}
}

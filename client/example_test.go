package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/posgate/posgate/client"
)

// A till's visit: the client gets its token itself, starts the interaction,
// looks a coupon up and records the sale with an Idempotency-Key stored
// beside it.
func Example() {
	ctx := context.Background()
	c, err := client.New(serverURL,
		client.WithCredentials(posClientID, posClientSecret, "pos_integration"),
		client.WithUserAgent("acme-till/4.2"))
	if err != nil {
		log.Fatal(err)
	}

	visit, err := c.StartInteraction(ctx, "clover", client.StartInteractionRequest{
		PosLocationID: "LOC123", TerminalID: "TERM-05"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("interaction:", visit.PosStatus, *visit.SessionID != "")

	found, err := c.LookupCouponCodes(ctx, "clover", client.CouponLookupRequest{PosLocationID: "LOC123", Code: "10offmq8kl8"})
	if err != nil {
		log.Fatal(err)
	}
	coupon := found.CouponCodes[0]
	fmt.Println("coupon:", *coupon.Code, coupon.Status, *coupon.Title)

	// The key is stored with the sale before it is sent, so that a till that
	// restarts before it has the answer sends the sale again with the same
	// key and posgate records it once.
	receipt := fmt.Sprintf("T05-%d", time.Now().UnixNano())
	key := "till-05-" + receipt
	sale, err := c.CreateTransaction(client.WithIdempotencyKey(ctx, key), "clover", client.TransactionRequest{
		SessionID:         *visit.SessionID,
		TransactionID:     receipt,
		TransactionType:   "Sale",
		PosLocationID:     "LOC123",
		TerminalID:        "TERM-05",
		TransactionAmount: 12.50,
		TransactionDate:   time.Now().UTC(),
		Products:          []client.TransactionProduct{{ProductID: "SKU-MUFFIN", Price: 12.50}},
		Loyalty:           &client.LoyaltyCard{CardNumber: "john-doe"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sale:", sale.PosStatus, sale.TransactionType, sale.Loyalty.UserID, "earned", sale.Loyalty.PointsEarned, "points")
	// Output:
	// interaction: Accepted true
	// coupon: 10OFFmq8kl8 Issued 10% off your next purchase
	// sale: Accepted Sale john-doe earned 12 points
}

// Errors are problem documents; errors.Is tells them apart and *Error has
// their fields.
func ExampleError() {
	ctx := context.Background()
	c, err := client.New(serverURL, client.WithCredentials(posClientID, posClientSecret))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.StartInteraction(ctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123", TerminalID: "TERM-404"})
	if errors.Is(err, client.ErrNotFound) {
		var pe *client.Error
		errors.As(err, &pe)
		fmt.Println("not found:", pe.Detail)
	}

	_, err = c.StartInteraction(ctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123"})
	if errors.Is(err, client.ErrValidation) {
		var pe *client.Error
		errors.As(err, &pe)
		fmt.Println("invalid:", pe.Errors)
	}
	// Output:
	// not found: Terminal 'TERM-404' is not registered at location 'LOC123'.
	// invalid: map[terminalId:[The terminalId field is required.]]
}

// The operator API is c.Admin; it needs a client of scope admin.
func ExampleAdmin_CreateCompany() {
	ctx := context.Background()
	c, err := client.New(serverURL, client.WithCredentials(adminClientID, adminSecret, "admin"))
	if err != nil {
		log.Fatal(err)
	}
	off := false
	id := fmt.Sprintf("bakery-%d", time.Now().UnixNano())
	company, err := c.Admin.CreateCompany(ctx, "clover", client.CreateCompanyRequest{
		PosCompanyID: id,
		Name:         "Example Bakery",
		Features:     &client.FeaturesUpdate{Carousel: &off},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(company.Name, company.Status, "carousel:", company.Features.Carousel)

	_, err = c.Admin.CreateCompany(ctx, "clover", client.CreateCompanyRequest{PosCompanyID: id})
	fmt.Println("again:", errors.Is(err, client.ErrConflict))
	// Output:
	// Example Bakery Active carousel: false
	// again: true
}

// A till can also fetch a token itself, e.g. to hand it to another process.
func ExampleClient_RequestToken() {
	c, err := client.New(serverURL)
	if err != nil {
		log.Fatal(err)
	}
	tok, err := c.RequestToken(context.Background(), client.TokenRequest{
		ClientID: posClientID, ClientSecret: posClientSecret, Scope: "pos_integration"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.TokenType, tok.ExpiresIn, tok.Scope)

	_, err = c.RequestToken(context.Background(), client.TokenRequest{ClientID: posClientID, ClientSecret: "wrong"})
	var pe *client.Error
	if errors.As(err, &pe) {
		fmt.Println(pe.StatusCode, pe.OAuthError)
	}
	// Output:
	// Bearer 3600 pos_integration
	// 401 invalid_client
}

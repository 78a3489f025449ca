package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/service"
)

// The loyalty-program and transaction commands (docs/api.md §13.8),
// through the operator API.

func printProgram(env *cli, p *posgate.LoyaltyProgram) {
	set := "defaults (never set)"
	if p.UpdatedAt != nil {
		set = "set " + stamp(*p.UpdatedAt)
	}
	env.say(p, "loyalty program of %s/%s: %s points per currency unit, %d stamps per sale of at least %s, auto-enroll %t; %s\n",
		p.POSSystemID, p.CompanyID, p.PointsPerCurrencyUnit, p.StampsPerSale, p.MinimumAmountForStamp, p.AutoEnroll, set)
}

func cmdLoyaltyProgramShow(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	return operatorCommand(ctx, env, "loyalty-program show", args, 0, func(f *flag.FlagSet) { cf = addCompanyFlags(f) },
		func(a *client.Admin, _ []string) error {
			p, err := answer[*posgate.LoyaltyProgram](a.GetLoyaltyProgram(ctx, *cf.pos, *cf.company))
			if err != nil {
				return err
			}
			printProgram(env, p)
			return nil
		})
}

func cmdLoyaltyProgramSet(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var rate, minimum *string
	var stamps *int
	var enroll *bool
	return operatorCommand(ctx, env, "loyalty-program set", args, 0, func(f *flag.FlagSet) {
		cf = addCompanyFlags(f)
		rate = f.String("points-per-unit", "1", "points per currency unit of a sale (two decimals)")
		stamps = f.Int("stamps-per-sale", 1, "stamps per sale")
		minimum = f.String("minimum-for-stamp", "0", "smallest sale amount that earns stamps")
		enroll = f.Bool("auto-enroll", false, "enrol a customer no loyalty user matches")
	}, func(a *client.Admin, _ []string) error {
		req := &service.PutLoyaltyProgramRequest{AutoEnroll: enroll}
		r, err := posgate.ParseAmount(*rate)
		if err != nil {
			return fmt.Errorf("--points-per-unit %q is not a number", *rate)
		}
		m, err := posgate.ParseAmount(*minimum)
		if err != nil {
			return fmt.Errorf("--minimum-for-stamp %q is not a number", *minimum)
		}
		n := int32(*stamps)
		if int(n) != *stamps {
			return fmt.Errorf("--stamps-per-sale %d is out of range", *stamps)
		}
		req.PointsPerCurrencyUnit, req.MinimumAmountForStamp, req.StampsPerSale = &r, &m, &n
		p, err := answer[*posgate.LoyaltyProgram](a.PutLoyaltyProgram(ctx, *cf.pos, *cf.company, conv[client.PutLoyaltyProgramRequest](req)))
		if err != nil {
			return err
		}
		printProgram(env, p)
		return nil
	})
}

func printTransaction(env *cli, t *posgate.Transaction) {
	if env.jsonOutput() {
		env.emit(t, nil)
		return
	}
	line := fmt.Sprintf("%s %s %s %s at %s/%s", stamp(t.Date), t.Type, t.TransactionID, t.Amount, t.LocationID, t.TerminalID)
	if t.RefundedAmount > 0 {
		line += fmt.Sprintf(", %s refunded", t.RefundedAmount)
	}
	if t.OriginalTransactionID != "" {
		line += ", refunds " + t.OriginalTransactionID
	}
	if t.UserID != "" {
		line += fmt.Sprintf(", customer %s %+d points %+d stamps", t.UserID, t.PointsEarned, t.StampsEarned)
	}
	if len(t.RedeemedCoupons) > 0 {
		line += ", coupons " + strings.Join(t.RedeemedCoupons, " ")
	}
	fmt.Fprintln(env.stdout, line)
}

func cmdTransactionList(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var location, user, day *string
	var page, size *int
	return operatorCommand(ctx, env, "transaction list", args, 0, func(f *flag.FlagSet) {
		cf = addCompanyFlags(f)
		location = f.String("location", "", "only this location's transactions")
		user = f.String("user", "", "only this loyalty user's transactions")
		day = f.String("day", "", "only those dated on this UTC day (YYYY-MM-DD)")
		page = f.Int("page", 1, "page, from 1")
		size = f.Int("page-size", service.DefaultTransactionPageSize, "transactions per page")
	}, func(a *client.Admin, _ []string) error {
		res, err := answer[*service.TransactionPage](a.ListTransactions(ctx, *cf.pos, *cf.company, client.TransactionQuery{
			PosLocationID: *location, UserID: *user, Day: *day, PageOptions: client.PageOptions{Page: *page, PageSize: *size}}))
		if err != nil {
			return err
		}
		if env.jsonOutput() {
			return env.emit(res, nil)
		}
		for _, t := range res.Transactions {
			printTransaction(env, t)
		}
		fmt.Fprintf(env.stdout, "page %d (%d per page) of %d transactions\n", res.Page.Page, res.Page.PageSize, res.Page.Total)
		return nil
	})
}

func cmdTransactionShow(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	return operatorCommand(ctx, env, "transaction show", args, 1, func(f *flag.FlagSet) { cf = addCompanyFlags(f) },
		func(a *client.Admin, pos []string) error {
			t, err := answer[*posgate.Transaction](a.GetTransaction(ctx, *cf.pos, *cf.company, pos[0]))
			if err != nil {
				return err
			}
			printTransaction(env, t)
			env.human(fmt.Sprintf("request: %s\nanswer: %s\n", t.Request, t.Answer))
			return nil
		})
}

func cmdTransactionRefund(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var id, amount *string
	return operatorCommand(ctx, env, "transaction refund", args, 1, func(f *flag.FlagSet) {
		cf = addCompanyFlags(f)
		id = f.String("id", "", "the refund's own transaction id (required; the same id again changes nothing)")
		amount = f.String("amount", "", "amount to refund (default: what is left of the sale)")
	}, func(a *client.Admin, pos []string) error {
		req := &service.OperatorRefundRequest{TransactionID: id}
		if *amount != "" {
			a, err := posgate.ParseAmount(*amount)
			if err != nil {
				return fmt.Errorf("--amount %q is not a number", *amount)
			}
			req.Amount = &a
		}
		// The API answers a refund recorded before as it answered it then
		// (docs/api.md §13.8): whether it was is asked first, to say so.
		lookErr := client.ErrNotFound
		if *id != "" {
			_, lookErr = a.GetTransaction(ctx, *cf.pos, *cf.company, *id)
			if lookErr != nil && !errors.Is(lookErr, client.ErrNotFound) {
				return lookErr
			}
		}
		res, err := answer[*posgate.TransactionAnswer](a.RefundTransaction(ctx, *cf.pos, *cf.company, pos[0], conv[client.RefundTransactionRequest](req)))
		if err != nil {
			return err
		}
		if lookErr == nil {
			env.human("already refunded (nothing changed): ")
		}
		return env.emit(res, func(w io.Writer) { printRefund(w, pos[0], res) })
	})
}

// printRefund prints a refund's answer for people: what it did to the
// customer, and the receipt the POS would print.
func printRefund(w io.Writer, saleID string, t *posgate.TransactionAnswer) {
	fmt.Fprintf(w, "refund %s of sale %s recorded\n", t.TransactionID, saleID)
	if l := t.Loyalty; l != nil {
		fmt.Fprintf(w, "customer %s: %+d points, %+d stamps (balance %d points, %d stamps)\n", l.UserID, l.PointsEarned, l.StampsEarned, l.Points, l.Stamps)
	} else {
		fmt.Fprintln(w, "no loyalty customer")
	}
	r := t.Receipt
	if r.PosStatus != posgate.PosAccepted {
		fmt.Fprintf(w, "receipt promotion: none (%s)\n", r.PosStatus)
	} else {
		fmt.Fprintf(w, "receipt promotion: %q, %q, QR code %s\n", r.PrimaryText, r.SecondaryText, r.ImageURL)
	}
	if r.LoyaltyText != "" {
		fmt.Fprintf(w, "receipt loyalty line: %s\n", r.LoyaltyText)
	}
}

// cmdCouponOfflineConflicts lists a company's offline conflicts
// (docs/api.md §24.6), newest first.
func cmdCouponOfflineConflicts(ctx context.Context, env *cli, args []string) error {
	var cf companyFlags
	var page, size *int
	return operatorCommand(ctx, env, "coupon offline-conflicts", args, 0, func(f *flag.FlagSet) {
		cf = addCompanyFlags(f)
		page = f.Int("page", 1, "page, from 1")
		size = f.Int("page-size", service.DefaultTransactionPageSize, "conflicts per page")
	}, func(a *client.Admin, _ []string) error {
		res, err := answer[*service.OfflineConflictPage](a.ListOfflineConflicts(ctx, *cf.pos, *cf.company, client.PageOptions{Page: *page, PageSize: *size}))
		if err != nil {
			return err
		}
		if env.jsonOutput() {
			return env.emit(res, nil)
		}
		for _, c := range res.Conflicts {
			fmt.Fprintf(env.stdout, "%s coupon %s honoured for sale %s of %s at %s/%s under kit %s: %s\n", stamp(c.RecordedAt),
				c.Code, c.TransactionID, stamp(c.SaleDate), c.LocationID, c.TerminalID, c.AllowanceID, c.Conflict)
		}
		fmt.Fprintf(env.stdout, "page %d (%d per page) of %d offline conflicts\n", res.Page.Page, res.Page.PageSize, res.Page.Total)
		return nil
	})
}

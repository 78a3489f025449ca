package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/service"
)

// contentCommands are the operator commands of the carousel and the receipt
// promotion; commands() lists them.
func contentCommands() []command {
	return []command{
		{"slide add", "add a carousel slide: --pos P --company C [--id ID] [--image URL] [--title T] [--text X] [--duration 5-15] [--position N]", cmdSlideAdd},
		{"slide list", "list a company's carousel slides in showing order: --pos P --company C", cmdSlideList},
		{"slide update", "change a slide: ID --pos P --company C [--image URL] [--title T] [--text X] [--duration S] [--position N]", cmdSlideUpdate},
		{"slide remove", "remove a slide: ID --pos P --company C", cmdSlideRemove},
		{"carousel template", "show, set or clear a company's external carousel URL template: --pos P --company C [--set URL | --clear]", cmdCarouselTemplate},
		{"receipt-promotion set", "set a receipt promotion: --pos P (--company C | --location L) --primary T [--secondary T] --target URL", cmdReceiptSet},
		{"receipt-promotion list", "list a company's receipt promotions: --pos P --company C", cmdReceiptList},
		{"receipt-promotion remove", "remove a receipt promotion: --pos P (--company C | --location L)", cmdReceiptRemove},
		{"impressions", "count carousel impressions per location and terminal: --pos P --company C [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--location L] [--terminal T]", cmdImpressions},
	}
}

// slideFlags are the content flags of slide add and slide update.
type slideFlags struct {
	image, title, text *string
	duration, position *int
}

func addSlideFlags(fs *flag.FlagSet) slideFlags {
	return slideFlags{
		image:    fs.String("image", "", "image URL (http(s), or a data:image URL of at most 16 KiB)"),
		title:    fs.String("title", "", "title"),
		text:     fs.String("text", "", "text"),
		duration: fs.Int("duration", posgate.DefaultSlideSeconds, "seconds the slide is shown (5-15)"),
		position: fs.Int("position", 0, "showing order, 1-10000 (0: after the last slide)"),
	}
}

func cmdSlideAdd(ctx context.Context, env *cli, args []string) error {
	var posID, company, id *string
	var sf slideFlags
	return operatorCommand(ctx, env, "slide add", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
		id = fs.String("id", "", "slide id (generated when empty)")
		sf = addSlideFlags(fs)
	}, func(a *client.Admin, _ []string) error {
		s, err := answer[*posgate.Slide](a.CreateSlide(ctx, *posID, *company, conv[client.CreateSlideRequest](&service.CreateSlideRequest{ID: *id, Position: sf.position,
			ImageURL: *sf.image, Title: *sf.title, Text: *sf.text, DurationSeconds: sf.duration})))
		if err != nil {
			return err
		}
		env.say(s, "added slide %s to %s/%s at position %d\n", s.ID, s.POSSystemID, s.CompanyID, s.Position)
		return nil
	})
}

func cmdSlideList(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "slide list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
	}, func(a *client.Admin, _ []string) error {
		ss, err := answer[[]*posgate.Slide](a.ListSlides(ctx, *posID, *company))
		if err != nil {
			return err
		}
		return table(env, []string{"POSITION", "ID", "SECONDS", "TITLE", "IMAGE"}, ss, func(s *posgate.Slide) []string {
			return []string{strconv.Itoa(s.Position), s.ID, strconv.Itoa(s.DurationSeconds), s.Title, shorten(s.ImageURL, 60)}
		})
	})
}

// shorten keeps long values (data: URLs) from flooding a table.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func cmdSlideUpdate(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	var sf slideFlags
	var fs *flag.FlagSet
	return operatorCommand(ctx, env, "slide update", args, 1, func(f *flag.FlagSet) {
		fs = f
		posID = f.String("pos", "", "POS system id (required)")
		company = f.String("company", "", "company id (required)")
		sf = addSlideFlags(f)
	}, func(a *client.Admin, pos []string) error {
		var upd service.UpdateSlideRequest
		if env.isSet(fs, "image") {
			upd.ImageURL = sf.image
		}
		if env.isSet(fs, "title") {
			upd.Title = sf.title
		}
		if env.isSet(fs, "text") {
			upd.Text = sf.text
		}
		if env.isSet(fs, "duration") {
			upd.DurationSeconds = sf.duration
		}
		if env.isSet(fs, "position") {
			upd.Position = sf.position
		}
		s, err := answer[*posgate.Slide](a.UpdateSlide(ctx, *posID, *company, pos[0], conv[client.UpdateSlideRequest](&upd)))
		if err != nil {
			return err
		}
		env.say(s, "updated slide %s of %s/%s: position %d, %d s\n", s.ID, s.POSSystemID, s.CompanyID, s.Position, s.DurationSeconds)
		return nil
	})
}

func cmdSlideRemove(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "slide remove", args, 1, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
	}, func(a *client.Admin, pos []string) error {
		s, err := answer[*posgate.Slide](a.DeleteSlide(ctx, *posID, *company, pos[0]))
		if err != nil {
			return err
		}
		env.say(s, "removed slide %s of %s/%s\n", s.ID, s.POSSystemID, s.CompanyID)
		return nil
	})
}

func cmdCarouselTemplate(ctx context.Context, env *cli, args []string) error {
	var posID, company, set *string
	var clear *bool
	var fs *flag.FlagSet
	return operatorCommand(ctx, env, "carousel template", args, 0, func(f *flag.FlagSet) {
		fs = f
		posID = f.String("pos", "", "POS system id (required)")
		company = f.String("company", "", "company id (required)")
		set = f.String("set", "", "the external carousel URL template; placeholders {posSystemId} {posCompanyId} {posLocationId} {terminalId}")
		clear = f.Bool("clear", false, "use posgate's own carousel page again")
	}, func(a *client.Admin, _ []string) error {
		var c *service.CarouselSettings
		var err error
		none := ""
		switch {
		case *clear && env.isSet(fs, "set"):
			return fmt.Errorf("give --set or --clear, not both")
		case *clear:
			c, err = answer[*service.CarouselSettings](a.PutCarouselSettings(ctx, *posID, *company, conv[client.PutCarouselSettingsRequest](&service.PutCarouselSettingsRequest{URLTemplate: &none})))
		case env.isSet(fs, "set"):
			c, err = answer[*service.CarouselSettings](a.PutCarouselSettings(ctx, *posID, *company, conv[client.PutCarouselSettingsRequest](&service.PutCarouselSettingsRequest{URLTemplate: set})))
		default:
			c, err = answer[*service.CarouselSettings](a.GetCarouselSettings(ctx, *posID, *company))
		}
		if err != nil {
			return err
		}
		if c.URLTemplate == "" {
			env.say(c, "company %s/%s uses posgate's own carousel page\n", c.POSSystemID, c.CompanyID)
		} else {
			env.say(c, "company %s/%s uses the external carousel %s\n", c.POSSystemID, c.CompanyID, c.URLTemplate)
		}
		return nil
	})
}

// receiptPlaceFlags are --company and --location: one of them names where
// a receipt promotion belongs.
func receiptPlaceFlags(fs *flag.FlagSet) (posID, company, location *string) {
	return fs.String("pos", "", "POS system id (required)"),
		fs.String("company", "", "company id: its default promotion (or the location's company, checked)"),
		fs.String("location", "", "location id: its own promotion")
}

func where(companyID, locationID string) string {
	if locationID == "" {
		return "company " + companyID + " (default)"
	}
	return "location " + locationID
}

func cmdReceiptSet(ctx context.Context, env *cli, args []string) error {
	var posID, company, location, primary, secondary, target *string
	return operatorCommand(ctx, env, "receipt-promotion set", args, 0, func(fs *flag.FlagSet) {
		posID, company, location = receiptPlaceFlags(fs)
		primary = fs.String("primary", "", "first line (required)")
		secondary = fs.String("secondary", "", "second line")
		target = fs.String("target", "", "the URL the QR code leads to (required)")
	}, func(a *client.Admin, _ []string) error {
		req := conv[client.PutReceiptPromotionRequest](&service.PutReceiptPromotionRequest{PrimaryText: *primary, SecondaryText: *secondary, TargetURL: *target})
		if err := locationOf(ctx, a, *posID, *company, *location); err != nil {
			return err
		}
		put := func() (*client.ReceiptPromotion, error) {
			return a.PutCompanyReceiptPromotion(ctx, *posID, *company, req)
		}
		if *location != "" {
			put = func() (*client.ReceiptPromotion, error) {
				return a.PutLocationReceiptPromotion(ctx, *posID, *location, req)
			}
		}
		p, err := answer[*service.ReceiptPromotionView](put())
		if err != nil {
			return err
		}
		env.say(p, "receipt promotion of %s set: QR code of %s\n", where(p.CompanyID, p.LocationID), p.TargetURL)
		return nil
	})
}

func cmdReceiptList(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "receipt-promotion list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
	}, func(a *client.Admin, _ []string) error {
		ps, err := answer[[]*service.ReceiptPromotionView](a.ListReceiptPromotions(ctx, *posID, *company))
		if err != nil {
			return err
		}
		return table(env, []string{"LOCATION", "PRIMARY", "SECONDARY", "TARGET"}, ps, func(p *service.ReceiptPromotionView) []string {
			loc := p.LocationID
			if loc == "" {
				loc = "(default)"
			}
			return []string{loc, p.PrimaryText, p.SecondaryText, p.TargetURL}
		})
	})
}

func cmdReceiptRemove(ctx context.Context, env *cli, args []string) error {
	var posID, company, location *string
	return operatorCommand(ctx, env, "receipt-promotion remove", args, 0, func(fs *flag.FlagSet) {
		posID, company, location = receiptPlaceFlags(fs)
	}, func(a *client.Admin, _ []string) error {
		if err := locationOf(ctx, a, *posID, *company, *location); err != nil {
			return err
		}
		del := func() (*client.ReceiptPromotion, error) {
			return a.DeleteCompanyReceiptPromotion(ctx, *posID, *company)
		}
		if *location != "" {
			del = func() (*client.ReceiptPromotion, error) {
				return a.DeleteLocationReceiptPromotion(ctx, *posID, *location)
			}
		}
		p, err := answer[*service.ReceiptPromotionView](del())
		if err != nil {
			return err
		}
		env.say(p, "receipt promotion of %s removed\n", where(p.CompanyID, p.LocationID))
		return nil
	})
}

func cmdImpressions(ctx context.Context, env *cli, args []string) error {
	var posID, company, from, to, location, terminal *string
	return operatorCommand(ctx, env, "impressions", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
		from = fs.String("from", "", "first UTC day, YYYY-MM-DD (default: 29 days before --to)")
		to = fs.String("to", "", "last UTC day, YYYY-MM-DD (default: today)")
		location = fs.String("location", "", "only this location")
		terminal = fs.String("terminal", "", "only terminals with this id")
	}, func(a *client.Admin, _ []string) error {
		rep, err := answer[*service.ImpressionReport](a.GetImpressions(ctx, *posID, *company, client.ImpressionQuery{From: *from, To: *to, PosLocationID: *location, TerminalID: *terminal}))
		if err != nil {
			return err
		}
		if env.jsonOutput() {
			return env.emit(rep, nil)
		}
		fmt.Fprintf(env.stdout, "impressions of %s/%s from %s to %s: %d\n", rep.POSSystemID, rep.CompanyID, rep.From, rep.To, rep.Total)
		var rows [][]string
		for _, term := range rep.Terminals {
			for _, s := range term.Slides {
				rows = append(rows, []string{term.LocationID, term.TerminalID, strconv.FormatInt(term.Impressions, 10), s.SlideID, strconv.FormatInt(s.Impressions, 10)})
			}
		}
		return table(env, []string{"LOCATION", "TERMINAL", "TOTAL", "SLIDE", "IMPRESSIONS"}, rows, func(r []string) []string { return r })
	})
}

// locationOf checks that a location given with its company belongs to
// it: the API's location routes name no company, and a location of another
// company is not found, as it was for the company's own use case.
func locationOf(ctx context.Context, a *client.Admin, posID, company, location string) error {
	if company == "" || location == "" {
		return nil
	}
	l, err := a.GetLocation(ctx, posID, location)
	if err != nil {
		return err
	}
	if l.PosCompanyID != company {
		return posgate.Errorf(posgate.ENOTFOUND, "location %q not found", location)
	}
	return nil
}

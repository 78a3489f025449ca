package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/service"
)

// webhookCommands are the operator commands of webhook endpoints and their
// deliveries (docs/api.md §19); commands() lists them.
func webhookCommands() []command {
	return []command{
		{"webhook add", "register a webhook endpoint and print its secret once: --pos P --company C --url U --events t1,t2 [--disabled]", cmdWebhookAdd},
		{"webhook list", "list a company's webhook endpoints: --pos P --company C", cmdWebhookList},
		{"webhook update", "change a webhook endpoint: ID --pos P --company C [--url U] [--events t1,t2] [--enable | --disable]", cmdWebhookUpdate},
		{"webhook remove", "remove a webhook endpoint and its deliveries: ID --pos P --company C", cmdWebhookRemove},
		{"webhook rotate-secret", "give a webhook endpoint a new secret (the old one signs beside it for 24 h) and print it once: ID --pos P --company C", cmdWebhookRotate},
		{"webhook deliveries", "list a webhook endpoint's deliveries, newest first: ID --pos P --company C [--status Pending|Delivered|Dead] [--page N] [--page-size N]", cmdWebhookDeliveries},
		{"webhook redeliver", "send dead deliveries again: ID --pos P --company C [--delivery N] (every dead one without --delivery)", cmdWebhookRedeliver},
		{"webhook test", "send a webhook.test event to an endpoint: ID --pos P --company C", cmdWebhookTest},
	}
}

// webhookCommand is operatorCommand with the flags every webhook command
// takes. Whether a URL on a private or loopback address is accepted is the
// server's to say (serve --webhooks-allow-loopback), since it is the server
// that sends.
func webhookCommand(ctx context.Context, env *cli, name string, args []string, nargs int, define func(fs *flag.FlagSet),
	fn func(a *client.Admin, posID, company string, pos []string) error) error {
	var posID, company *string
	return operatorCommand(ctx, env, name, args, nargs, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
		if define != nil {
			define(fs)
		}
	}, func(a *client.Admin, pos []string) error {
		return fn(a, *posID, *company, pos)
	})
}

// eventList splits a comma-separated list of event types.
func eventList(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// secretOrNote is a secret to print, or, when the answer was a replay of
// the one that showed it (the client's retry under its Idempotency-Key
// after a lost answer), the server's note on how to get a new one.
func secretOrNote(secret, note string) string {
	if secret == "" && note != "" {
		return "(not shown again) " + note
	}
	return secret
}

func printEndpoint(env *cli, verb string, e *client.WebhookEndpoint, secret string) {
	state := "enabled"
	if !e.Enabled {
		state = "disabled"
	}
	fmt.Fprintf(env.stdout, "%s webhook endpoint %s of %s/%s (%s): %s for %s\n", verb, e.ID, e.PosSystemID, e.PosCompanyID, state, e.URL,
		strings.Join(e.EventTypes, ", "))
	if secret != "" {
		fmt.Fprintf(env.stdout, "signing secret (shown once): %s\n", secret)
	}
}

func cmdWebhookAdd(ctx context.Context, env *cli, args []string) error {
	var url, events *string
	var disabled *bool
	return webhookCommand(ctx, env, "webhook add", args, 0, func(fs *flag.FlagSet) {
		url = fs.String("url", "", "the receiver's URL, http or https (required)")
		events = fs.String("events", "", "comma-separated event types (required): "+strings.Join(posgate.EventTypes, ", "))
		disabled = fs.Bool("disabled", false, "register it disabled")
	}, func(a *client.Admin, posID, company string, _ []string) error {
		enabled := !*disabled
		e, err := a.CreateWebhookEndpoint(ctx, posID, company, client.CreateWebhookEndpointRequest{URL: *url,
			EventTypes: eventList(*events), Enabled: &enabled})
		if err != nil {
			return err
		}
		printEndpoint(env, "registered", &e.WebhookEndpoint, secretOrNote(e.Secret, e.SecretNote))
		return nil
	})
}

func cmdWebhookList(ctx context.Context, env *cli, args []string) error {
	return webhookCommand(ctx, env, "webhook list", args, 0, nil, func(a *client.Admin, posID, company string, _ []string) error {
		list, err := a.ListWebhookEndpoints(ctx, posID, company)
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "ENABLED", "URL", "EVENTS", "NOTE"}, list, func(e client.WebhookEndpoint) []string {
			return []string{e.ID, strconv.FormatBool(e.Enabled), e.URL, strings.Join(e.EventTypes, ","), e.DisabledReason}
		})
	})
}

func cmdWebhookUpdate(ctx context.Context, env *cli, args []string) error {
	var url, events *string
	var enable, disable *bool
	var fs *flag.FlagSet
	return webhookCommand(ctx, env, "webhook update", args, 1, func(f *flag.FlagSet) {
		fs = f
		url = fs.String("url", "", "the receiver's new URL")
		events = fs.String("events", "", "the new comma-separated event types")
		enable = fs.Bool("enable", false, "enable the endpoint (clears the reason posgate disabled it for)")
		disable = fs.Bool("disable", false, "disable the endpoint: it receives no new events")
	}, func(a *client.Admin, posID, company string, pos []string) error {
		if *enable && *disable {
			return fmt.Errorf("--enable and --disable exclude each other")
		}
		req := client.UpdateWebhookEndpointRequest{}
		if env.isSet(fs, "url") {
			req.URL = url
		}
		if env.isSet(fs, "events") {
			req.EventTypes = eventList(*events)
			if req.EventTypes == nil {
				req.EventTypes = []string{}
			}
		}
		if *enable || *disable {
			req.Enabled = enable
		}
		e, err := a.UpdateWebhookEndpoint(ctx, posID, company, pos[0], req)
		if err != nil {
			return err
		}
		printEndpoint(env, "updated", e, "")
		return nil
	})
}

func cmdWebhookRemove(ctx context.Context, env *cli, args []string) error {
	return webhookCommand(ctx, env, "webhook remove", args, 1, nil, func(a *client.Admin, posID, company string, pos []string) error {
		e, err := a.DeleteWebhookEndpoint(ctx, posID, company, pos[0])
		if err != nil {
			return err
		}
		printEndpoint(env, "removed", e, "")
		return nil
	})
}

func cmdWebhookRotate(ctx context.Context, env *cli, args []string) error {
	return webhookCommand(ctx, env, "webhook rotate-secret", args, 1, nil, func(a *client.Admin, posID, company string, pos []string) error {
		e, err := a.RotateWebhookSecret(ctx, posID, company, pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "new signing secret of %s (shown once): %s\nthe previous secret signs beside it until %s\n", e.ID, secretOrNote(e.Secret, e.SecretNote),
			e.PreviousSecretUntil.UTC().Format(time.RFC3339))
		return nil
	})
}

func cmdWebhookDeliveries(ctx context.Context, env *cli, args []string) error {
	var status *string
	var page, size *int
	return webhookCommand(ctx, env, "webhook deliveries", args, 1, func(fs *flag.FlagSet) {
		status = fs.String("status", "", "only Pending, Delivered or Dead deliveries")
		page = fs.Int("page", 1, "page, from 1")
		size = fs.Int("page-size", service.DefaultDeliveryPageSize, "deliveries per page")
	}, func(a *client.Admin, posID, company string, pos []string) error {
		p, err := a.ListWebhookDeliveries(ctx, posID, company, pos[0], client.DeliveryQuery{Status: *status, PageOptions: client.PageOptions{Page: *page, PageSize: *size}})
		if err != nil {
			return err
		}
		err = table(env, []string{"ID", "EVENT", "TYPE", "USER", "STATUS", "ATTEMPTS", "LAST", "CODE", "NEXT", "ERROR"}, p.Deliveries, func(d client.WebhookDelivery) []string {
			return []string{strconv.FormatInt(d.ID, 10), d.EventID, d.EventType, d.UserID, d.Status, strconv.Itoa(d.Attempts), timeOrDash(d.LastAttemptAt),
				strconv.Itoa(d.LastStatusCode), timeOrDash(d.NextAttemptAt), shorten(d.LastError, 60)}
		})
		if err == nil {
			fmt.Fprintf(env.stdout, "page %d of %d deliveries\n", p.Page.Page, p.Page.Total)
		}
		return err
	})
}

// timeOrDash renders an optional time for a table.
func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func cmdWebhookRedeliver(ctx context.Context, env *cli, args []string) error {
	var delivery *int64
	return webhookCommand(ctx, env, "webhook redeliver", args, 1, func(fs *flag.FlagSet) {
		delivery = fs.Int64("delivery", 0, "the dead delivery to send again (0: every dead one)")
	}, func(a *client.Admin, posID, company string, pos []string) error {
		var r *client.WebhookRedelivered
		var err error
		if *delivery != 0 {
			r, err = a.RedeliverWebhook(ctx, posID, company, pos[0], *delivery)
		} else {
			r, err = a.RedeliverDeadWebhooks(ctx, posID, company, pos[0])
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "%d dead deliveries of %s are pending again\n", r.Redelivered, pos[0])
		return nil
	})
}

func cmdWebhookTest(ctx context.Context, env *cli, args []string) error {
	return webhookCommand(ctx, env, "webhook test", args, 1, nil, func(a *client.Admin, posID, company string, pos []string) error {
		r, err := a.SendTestWebhook(ctx, posID, company, pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "test event %s written for %s; a running posgate sends it\n", r.EventID, pos[0])
		return nil
	})
}
